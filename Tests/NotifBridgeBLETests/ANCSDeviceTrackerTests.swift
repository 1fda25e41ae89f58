import NotifBridgeANCS
import Testing
@testable import NotifBridgeBLE

/// The ANCS client's decisions, without a bus: when to subscribe, what to pass on, when a
/// device is gone, in the orders bluetoothd may report them.
@Suite("ANCS device tracker")
struct ANCSDeviceTrackerTests {
    static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    static let ns = device + "/service0020/char0021"
    static let cp = device + "/service0020/char0024"
    static let ds = device + "/service0020/char0026"

    /// A tracker that has seen all three characteristics; returns what the last one caused.
    private func resolved(_ tracker: inout ANCSDeviceTracker, device: String = device) -> [ANCSDeviceTracker.Effect] {
        _ = tracker.characteristicAdded(path: device + "/service0020/char0021", uuid: ANCSUUID.notificationSource, device: device)
        _ = tracker.characteristicAdded(path: device + "/service0020/char0024", uuid: ANCSUUID.controlPoint, device: device)
        return tracker.characteristicAdded(path: device + "/service0020/char0026", uuid: ANCSUUID.dataSource, device: device)
    }

    @Test("Subscribes once all three are there; a value between the subscriptions and ready is held, then follows ready")
    func earlyValueFollowsReady() {
        var tracker = ANCSDeviceTracker()
        #expect(tracker.characteristicAdded(path: Self.device + "/service0001/char0002", uuid: "00002a05-0000-1000-8000-00805f9b34fb", device: Self.device).isEmpty)
        #expect(resolved(&tracker) == [.subscribe(device: Self.device, dataSource: Self.ds, notificationSource: Self.ns, generation: 1)])
        #expect(tracker.deviceChanged(Self.device, connected: nil, servicesResolved: true).isEmpty, "already subscribing")
        #expect(tracker.value(path: Self.ns, bytes: [1]).isEmpty)
        #expect(tracker.subscribed(Self.device, generation: 1) == [.emit(.ready(device: Self.device)), .emit(.notificationSource(device: Self.device, [1]))])
        #expect(tracker.value(path: Self.ds, bytes: [2]) == [.emit(.dataSource(device: Self.device, [2]))])
        #expect(tracker.value(path: Self.cp, bytes: [3]).isEmpty, "the Control Point does not notify")
        #expect(tracker.controlPoint(of: Self.device) == Self.cp)
    }

    /// A stranger exporting thousands of characteristics with ANCS UUIDs: each role keeps one
    /// path, so a disconnect's search stays short.
    @Test("A device that exports a role again replaces it: three paths a device at most")
    func pathsBounded() {
        var tracker = ANCSDeviceTracker()
        for n in 0..<1000 {
            _ = tracker.characteristicAdded(path: Self.device + "/service0020/char\(n)", uuid: ANCSUUID.notificationSource, device: Self.device)
        }
        _ = tracker.characteristicAdded(path: Self.cp, uuid: ANCSUUID.controlPoint, device: Self.device)
        #expect(tracker.trackedPaths == 2)
        #expect(tracker.controlPoint(of: Self.device) == nil, "not ready: nothing subscribed yet")
        #expect(tracker.value(path: Self.device + "/service0020/char999", bytes: [1]) == [.dropped(device: Self.device, "a value arrived before the client subscribed")])
        #expect(tracker.value(path: Self.device + "/service0020/char0", bytes: [1]).isEmpty, "a replaced path is no longer followed")
    }

    /// The client subscribes one device at a time, each call up to 30 s: a request whose device
    /// went (or went and came back) meanwhile is skipped, not made.
    @Test("A subscription is still wanted until it finishes, fails, or its device goes")
    func stillWanted() {
        var tracker = ANCSDeviceTracker()
        _ = resolved(&tracker)
        #expect(tracker.isSubscribing(Self.device, generation: 1))
        #expect(!tracker.isSubscribing(Self.device, generation: 0))
        #expect(!tracker.isSubscribing("/org/bluez/hci0/dev_11_22_33_44_55_66", generation: 1))
        _ = tracker.deviceChanged(Self.device, connected: false, servicesResolved: nil)
        #expect(!tracker.isSubscribing(Self.device, generation: 1), "the device left")
        let again = tracker.deviceChanged(Self.device, connected: true, servicesResolved: true)
        guard case .subscribe(_, _, _, let generation)? = again.first else {
            Issue.record("no new subscription: \(again)")
            return
        }
        #expect(!tracker.isSubscribing(Self.device, generation: 1) && tracker.isSubscribing(Self.device, generation: generation))
        tracker.subscribeFailed(Self.device, generation: generation)
        #expect(!tracker.isSubscribing(Self.device, generation: generation))
    }

    @Test("A disconnect reports gone; services resolved again on reconnect subscribe again; a stale subscription is ignored")
    func reconnect() {
        var tracker = ANCSDeviceTracker()
        _ = resolved(&tracker)
        _ = tracker.subscribed(Self.device, generation: 1)
        #expect(tracker.deviceChanged(Self.device, connected: false, servicesResolved: nil) == [.emit(.gone(device: Self.device))])
        #expect(tracker.deviceChanged(Self.device, connected: false, servicesResolved: false).isEmpty, "gone once")
        #expect(tracker.value(path: Self.ns, bytes: [1]) == [.dropped(device: Self.device, "a value arrived before the client subscribed")])
        #expect(tracker.controlPoint(of: Self.device) == nil)
        #expect(tracker.deviceChanged(Self.device, connected: true, servicesResolved: true)
            == [.subscribe(device: Self.device, dataSource: Self.ds, notificationSource: Self.ns, generation: 3)])
        #expect(tracker.deviceChanged(Self.device, connected: false, servicesResolved: nil).isEmpty, "not ready yet: nothing to report gone")
        #expect(tracker.subscribed(Self.device, generation: 3).isEmpty, "the subscription finished after the device left")
    }

    @Test("Values held before ready and tracked devices are bounded: the limit is taken, one more is dropped")
    func bounds() {
        var tracker = ANCSDeviceTracker()
        _ = resolved(&tracker)
        for n in 0..<ANCSDeviceTracker.maxEarlyValues { #expect(tracker.value(path: Self.ns, bytes: [UInt8(n)]).isEmpty) }
        #expect(tracker.value(path: Self.ns, bytes: [0xFF]).count == 1)
        #expect(tracker.subscribed(Self.device, generation: 1).count == 1 + ANCSDeviceTracker.maxEarlyValues)
        #expect(tracker.value(path: Self.ds, bytes: Array(repeating: 0, count: ANCSGATT.maxValueLength)).count == 1)
        #expect(tracker.value(path: Self.ds, bytes: Array(repeating: 0, count: ANCSGATT.maxValueLength + 1)).first != .emit(.dataSource(device: Self.device, [])))

        var many = ANCSDeviceTracker()
        for n in 0..<ANCSDeviceTracker.maxDevices {
            #expect(resolved(&many, device: "/org/bluez/hci0/dev_00_00_00_00_00_\(n)").count == 1)
        }
        guard case .dropped? = resolved(&many, device: "/org/bluez/hci0/dev_11_00_00_00_00_00").first else {
            Issue.record("a device past the limit was tracked")
            return
        }
    }

    @Test("Removing the service ends the device; removing the device forgets it")
    func removal() {
        var tracker = ANCSDeviceTracker()
        _ = resolved(&tracker)
        _ = tracker.subscribed(Self.device, generation: 1)
        #expect(tracker.removed(path: Self.device + "/service0020") == [.emit(.gone(device: Self.device))])
        #expect(tracker.removed(path: Self.device).isEmpty)
        #expect(tracker.devices.isEmpty)
    }
}
