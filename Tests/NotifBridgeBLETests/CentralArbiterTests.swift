import NotifBridgeDBus
import NotifBridgeWire
import Testing
@testable import NotifBridgeBLE

@Suite("One central at a time")
struct CentralArbiterTests {
    private static let phone = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    private static let other = "/org/bluez/hci0/dev_66_55_44_33_22_11"

    private func write(_ device: String, _ value: [UInt8], mtu: Int? = nil) throws -> InboxWrite {
        var options: DBusProperties = ["device": .objectPath(device)]
        if let mtu { options["mtu"] = .uint16(UInt16(mtu)) }
        return try InboxWrite(arguments: [.bytes(value), .properties(options)])
    }

    @Test("The first write opens the link with the ATT MTU's chunk length; later writes are chunks")
    func opens() throws {
        var arbiter = CentralArbiter()
        arbiter.startNotify()
        #expect(try arbiter.write(write(Self.phone, [1], mtu: 185)) == [.open(device: Self.phone, chunkLength: 182), .chunk([1])])
        #expect(try arbiter.write(write(Self.phone, [2], mtu: 185)) == [.chunk([2])])
        #expect(try arbiter.write(write(Self.phone, [3])) == [.chunk([3])], "a write without an MTU keeps the known one")
        #expect(try arbiter.write(write(Self.phone, [4], mtu: 517)) == [.chunkLength(GATTProfile.maxChunkLength), .chunk([4])])
    }

    @Test("Without an MTU the link starts at the LE default of 23 (20-byte chunks)")
    func defaultMTU() throws {
        var arbiter = CentralArbiter()
        #expect(try arbiter.write(write(Self.phone, [1])) == [.open(device: Self.phone, chunkLength: 20), .chunk([1])])
    }

    @Test("A second central is refused while the first is connected, and served once it is gone")
    func secondCentral() throws {
        var arbiter = CentralArbiter()
        _ = try arbiter.write(write(Self.phone, [1], mtu: 185))
        #expect(throws: InboxWrite.Refusal.self) { try arbiter.write(write(Self.other, [9], mtu: 185)) }
        #expect(arbiter.disconnected(device: Self.other) == [], "another device's disconnect does not end the link")
        #expect(arbiter.disconnected(device: Self.phone) == [.close(device: Self.phone, reason: "the central disconnected")])
        #expect(try arbiter.write(write(Self.other, [9], mtu: 247)) == [.open(device: Self.other, chunkLength: 244), .chunk([9])])
    }

    /// Subscription events in the orders bluetoothd produces them: StartNotify before the
    /// first write, StopNotify and StartNotify again around it, or none at all.
    @Test("Subscription is tracked whatever its order relative to the link", arguments: [
        (events: [], mayNotify: true),
        (events: ["start"], mayNotify: true),
        (events: ["start", "stop"], mayNotify: false),
        (events: ["start", "stop", "start"], mayNotify: true),
        (events: ["stop"], mayNotify: false),
        (events: ["stop", "start"], mayNotify: true),
    ])
    func subscriptionOrders(events: [String], mayNotify: Bool) throws {
        for writeAt in 0...events.count {
            var arbiter = CentralArbiter()
            for (index, event) in events.enumerated() {
                if index == writeAt { #expect(try arbiter.write(write(Self.phone, [1])).first == .open(device: Self.phone, chunkLength: 20)) }
                if event == "start" { arbiter.startNotify() } else { arbiter.stopNotify() }
            }
            if writeAt == events.count { _ = try arbiter.write(write(Self.phone, [1])) }
            #expect(arbiter.mayNotify == mayNotify, "events \(events), first write after \(writeAt) of them")
            #expect(arbiter.activeDevice == Self.phone, "no subscription event ends the link")
        }
    }

    @Test("Unsubscribing does not end the link; the central's disconnect does")
    func unsubscribe() throws {
        var arbiter = CentralArbiter()
        arbiter.startNotify()
        _ = try arbiter.write(write(Self.phone, [1]))
        arbiter.stopNotify()
        #expect(!arbiter.mayNotify)
        #expect(try arbiter.write(write(Self.phone, [2])) == [.chunk([2])], "writes still reach the link")
        #expect(arbiter.disconnected(device: Self.phone) == [.close(device: Self.phone, reason: "the central disconnected")])
    }
}
