import Logging
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import NotifBridgeLogGate
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing
@testable import NotifBridgeBLE

/// The peripheral against a stand-in for bluetoothd on a private bus: it owns `org.bluez`,
/// accepts the registrations, and then calls the application the way bluetoothd does.
@Suite(
    "GATT peripheral on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct PeripheralBusTests {
    static let phone = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    static let other = "/org/bluez/hci0/dev_66_55_44_33_22_11"

    /// bluetoothd's side: records registrations and notifications.
    final class Record: Sendable {
        let registered = Mutex<[String]>([])
        let notified = Mutex<[[UInt8]]>([])
        let disconnects = Mutex<[String]>([])
    }

    final class FakeBlueZ: Sendable {
        let bus: DBusConnection
        let record = Record()

        init(address: DBusBusAddress) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName("org.bluez")
            let record = self.record
            try await bus.exportObject(at: "/org/bluez") { call in
                switch call.member {
                case "RegisterApplication", "RegisterAdvertisement":
                    record.registered.withLock { $0.append(call.member) }
                    return .empty
                case "Disconnect":
                    record.disconnects.withLock { $0.append(call.path) }
                    return .empty
                case "Set", "UnregisterApplication", "UnregisterAdvertisement":
                    return .empty
                default:
                    return .notHandled
                }
            }
        }

        func watchNotifications(from peripheral: String) async throws {
            let record = self.record
            try await bus.subscribe(matchRule: "type='signal',sender='\(peripheral)',path='\(GATTApplication.outbox)'") { signal in
                if let value = try? signal.asPropertiesChanged().changed["Value"]?.bytesValue {
                    record.notified.withLock { $0.append(value) }
                }
            }
        }

        func callApp(_ peripheral: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await bus.call(destination: peripheral, path: path, interface: interface, member: member, arguments: arguments)
        }

        func write(_ peripheral: String, _ value: [UInt8], device: String = PeripheralBusTests.phone, mtu: UInt16 = 185) async throws {
            _ = try await callApp(peripheral, GATTApplication.inbox, "org.bluez.GattCharacteristic1", "WriteValue",
                                  [.bytes(value), .properties(["device": .objectPath(device), "mtu": .uint16(mtu), "type": .string("request")])])
        }

        func deviceGone(_ device: String) async throws {
            try await bus.emit(.propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)]))
        }
    }

    @Test("Registration, writes into one link, notifications in chunks, one central at a time, and a disconnect")
    func peripheral() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address)
        let peripheral = try await GATTPeripheral.start(adapter: "hci0", name: "NotifBridge-T", bus: daemon.address, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        #expect(bluez.record.registered.withLock { $0 } == ["RegisterApplication", "RegisterAdvertisement"])
        let name = try await Self.peripheralName(bluez, excluding: bluez.bus.uniqueName)

        let objects = try #require(try await bluez.callApp(name, GATTApplication.application, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects").first).asManagedObjects()
        #expect(objects.keys.sorted() == [GATTApplication.service, GATTApplication.inbox, GATTApplication.outbox].sorted())
        let advertisement = try #require(try await bluez.callApp(name, GATTApplication.advertisement, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.bluez.LEAdvertisement1")]).first).asProperties()
        #expect(advertisement["LocalName"]?.stringValue == "NotifBridge-T")

        try await bluez.watchNotifications(from: name)
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await bluez.write(name, [1, 2, 3])
        var links = peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        #expect(link.chunkLength == 182)
        var inbound = link.inbound.makeAsyncIterator()
        #expect(try await inbound.next().map(chunk) == [1, 2, 3])
        // Writes and notifications interleaved, as during a key exchange: every write is
        // answered and arrives in order.
        for n in 4...8 {
            try await link.write([[UInt8(100 + n)]])
            try await bluez.write(name, [UInt8(n)])
        }
        for n in 4...8 { #expect(try await inbound.next().map(chunk) == [UInt8(n)]) }

        await #expect(throws: DBusError.self) { try await bluez.write(name, [9], device: Self.other) }
        try await link.write([[10], Array(repeating: 11, count: 182)])
        await #expect(throws: BluetoothFailure.self) { try await link.write([Array(repeating: 12, count: 183)]) }
        try await TestWait.until("7 notifications") { bluez.record.notified.withLock { $0.count } == 7 }
        #expect(bluez.record.notified.withLock { $0 } == [[104], [105], [106], [107], [108], [10], Array(repeating: 11, count: 182)])

        try await bluez.deviceGone(Self.phone)
        #expect(try await inbound.next() == nil, "the link ends when its central disconnects")
        try await bluez.write(name, [13], device: Self.other, mtu: 247)
        let next = try #require(await links.next())
        #expect(next.chunkLength == 244)
        await peripheral.stop()
        bluez.bus.close()
    }

    /// Any client of the system bus may address a signal to the peripheral's connection. Only
    /// bluetoothd's own say that a central left, and only the bus's that bluetoothd did.
    @Test("A stranger's signals do not end the link: a forged disconnect, a forged bluetoothd exit")
    func forgedSignals() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        _ = try await fixture.bluez.callApp(fixture.name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await fixture.bluez.write(fixture.name, [1])
        var links = fixture.peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        var inbound = link.inbound.makeAsyncIterator()
        #expect(try await inbound.next().map(chunk) == [1])

        let forger = try await DBusConnection.connect(to: fixture.daemon.address)
        defer { forger.close() }
        var disconnect = DBusSignal.propertiesChanged(path: Self.phone, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)])
        disconnect.destination = fixture.name
        try await forger.emit(disconnect)
        try await forger.emit(DBusSignal(
            path: "/org/freedesktop/DBus", interface: DBusConnection.busDaemon, member: "NameOwnerChanged",
            arguments: [.string("org.bluez"), .string(fixture.bluez.bus.uniqueName), .string("")], destination: fixture.name
        ))
        try await Task.sleep(for: .milliseconds(300))
        try await fixture.bluez.write(fixture.name, [2])
        #expect(try await inbound.next().map(chunk) == [2], "the link is still open")

        try await fixture.bluez.deviceGone(Self.phone)
        #expect(try await inbound.next() == nil, "bluetoothd's own disconnect ends it")
        await fixture.peripheral.stop()
        fixture.bluez.bus.close()
    }

    /// While one central holds the link, another's writes are refused, each one; the log
    /// names the first few and the rest go into the daemon's summary.
    @Test("A second central writing in a loop: every write refused, a few lines logged")
    func refusalsRationed() async throws {
        let log = CapturedLog()
        let fixture = try await Fixture.start(logger: Logger(label: "test", factory: { _ in log }))
        defer { fixture.daemon.stop() }
        try await fixture.bluez.write(fixture.name, [1])
        var refusals = 0
        for _ in 0..<200 {
            do { try await fixture.bluez.write(fixture.name, [2], device: Self.other) } catch { refusals += 1 }
        }
        #expect(refusals == 200)
        let lines = log.messages(at: .notice).filter { $0.hasPrefix("refused a write") }
        // Five a window of 10 s; a busy test run may spread the 200 writes over a few windows.
        #expect((LogThrottle().burst...LogThrottle().burst * 4).contains(lines.count), "\(lines.count) lines")
        #expect(lines.first?.contains("66:55:44:33:22:11") == true, "\(lines)")
        await fixture.peripheral.stop()
        fixture.bluez.bus.close()
    }

    /// The daemon closes each link once it has served it, often after its central left: that
    /// close must not disconnect the same device's next connection.
    @Test("Closing a link disconnects its central once, and never the central's next link")
    func closeByGeneration() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        _ = try await fixture.bluez.callApp(fixture.name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        var links = fixture.peripheral.links.makeAsyncIterator()
        try await fixture.bluez.write(fixture.name, [1])
        let first = try #require(await links.next())
        try await fixture.bluez.deviceGone(Self.phone)
        var firstInbound = first.inbound.makeAsyncIterator()
        _ = try await firstInbound.next()
        #expect(try await firstInbound.next() == nil)
        try await fixture.bluez.write(fixture.name, [2])
        let second = try #require(await links.next())
        first.close()
        try await Task.sleep(for: .milliseconds(200))
        #expect(fixture.bluez.record.disconnects.withLock { $0 }.isEmpty, "the old link's close left the new one alone")
        second.close()
        second.close()
        try await TestWait.until("the central to be disconnected") { fixture.bluez.record.disconnects.withLock { $0 } == [Self.phone] }
        try await Task.sleep(for: .milliseconds(200))
        #expect(fixture.bluez.record.disconnects.withLock { $0 } == [Self.phone], "once")
        await fixture.peripheral.stop()
        fixture.bluez.bus.close()
    }

    /// Nothing reads the link: the peripheral keeps `maxUnreadWrites` chunks and refuses the
    /// next write, instead of buffering whatever a central sends.
    @Test("Unread writes: the limit is kept, one more is refused with InProgress, and reading makes room")
    func unreadWritesBounded() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        _ = try await fixture.bluez.callApp(fixture.name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        for n in 0..<GATTPeripheral.maxUnreadWrites {
            try await fixture.bluez.write(fixture.name, [UInt8(truncatingIfNeeded: n)])
        }
        await #expect {
            try await fixture.bluez.write(fixture.name, [0xFF])
        } throws: { error in
            if case .errorReply(let name, _) = error as? DBusError { name == "org.bluez.Error.InProgress" } else { false }
        }
        var links = fixture.peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        var inbound = link.inbound.makeAsyncIterator()
        #expect(try await inbound.next().map(chunk) == [0])
        try await fixture.bluez.write(fixture.name, [0xFE])
        for n in 1..<GATTPeripheral.maxUnreadWrites {
            #expect(try await inbound.next().map(chunk) == [UInt8(truncatingIfNeeded: n)])
        }
        #expect(try await inbound.next().map(chunk) == [0xFE], "the refused write is not there; the one after the room is")
        await fixture.peripheral.stop()
        fixture.bluez.bus.close()
    }

    /// How the peripheral can lose bluetoothd: it leaves the bus, or the peripheral's own bus
    /// connection is lost (the bus daemon gone, or dropping it), after which nothing would ever
    /// reach it again.
    enum Loss: String, CaseIterable, Sendable { case bluetoothdLeaves, busConnectionLost }

    /// Either way the link and the link stream end, and the daemon exits for its supervisor to
    /// start it again.
    @Test("When bluetoothd leaves the bus or the bus connection is lost, the open link and the link stream end", arguments: Loss.allCases)
    func bluetoothdGone(_ loss: Loss) async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        let (bluez, peripheral, name) = (fixture.bluez, fixture.peripheral, fixture.name)
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await bluez.write(name, [1])
        var links = peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        var inbound = link.inbound.makeAsyncIterator()
        _ = try await inbound.next()
        switch loss {
        case .bluetoothdLeaves: bluez.bus.close()
        case .busConnectionLost: fixture.daemon.stop()
        }
        await #expect(throws: BluetoothFailure.self) { _ = try await inbound.next() }
        #expect(await links.next() == nil)
        await peripheral.stop()
    }

    /// What another part reports (the pairing agent's or the ANCS client's bus lost) ends the
    /// peripheral too, and a central that writes after that gets a refusal, not a link the
    /// stopping daemon would never serve.
    @Test("end(because:) ends the link stream; a write after it is refused")
    func endedRefusesWrites() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        let (bluez, peripheral, name) = (fixture.bluez, fixture.peripheral, fixture.name)
        peripheral.end(because: "the pairing agent lost its system bus connection")
        var links = peripheral.links.makeAsyncIterator()
        #expect(await links.next() == nil)
        await #expect {
            try await bluez.write(name, [1])
        } throws: { error in
            if case .errorReply(let name, let message) = error as? DBusError { name == "org.bluez.Error.Failed" && message.contains("stopping") } else { false }
        }
        await peripheral.stop()
        bluez.bus.close()
    }

    /// The order of the failing VM run: the central subscribed, bluetoothd reported it gone
    /// (StopNotify) before the central's first write, and it subscribed again only after
    /// the link opened. The accessory's first notification waits for the new subscription
    /// instead of failing the link.
    @Test("A subscription that comes and goes around the first write: notifications wait for the resubscription")
    func resubscribeAroundFirstWrite() async throws {
        let fixture = try await Fixture.start(resubscribeGrace: .seconds(30))
        defer { fixture.daemon.stop() }
        let (bluez, peripheral, name) = (fixture.bluez, fixture.peripheral, fixture.name)
        try await bluez.watchNotifications(from: name)
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StopNotify")
        try await bluez.write(name, [1])
        var links = peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())

        let reply = Task { try await link.write([[0xA1], [0xA2]]) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(bluez.record.notified.withLock { $0.isEmpty }, "nothing is notified while nobody is subscribed")
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await reply.value
        try await TestWait.until("2 notifications") { bluez.record.notified.withLock { $0.count } == 2 }
        #expect(bluez.record.notified.withLock { $0 } == [[0xA1], [0xA2]])

        // Unsubscribed and subscribed again in the middle of the link: it carries on.
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StopNotify")
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await bluez.write(name, [2])
        try await link.write([[0xA3]])
        try await TestWait.until("3 notifications") { bluez.record.notified.withLock { $0.count } == 3 }
        var inbound = link.inbound.makeAsyncIterator()
        #expect(try await inbound.next().map(chunk) == [1])
        #expect(try await inbound.next().map(chunk) == [2])
        await peripheral.stop()
        bluez.bus.close()
    }

    @Test("A central bluetoothd never reported as subscribed (its CCC predates this process) is notified")
    func subscriptionNeverReported() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.daemon.stop() }
        let (bluez, peripheral, name) = (fixture.bluez, fixture.peripheral, fixture.name)
        try await bluez.watchNotifications(from: name)
        try await bluez.write(name, [1])
        var links = peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        try await link.write([[0xB1]])
        try await TestWait.until("1 notification") { bluez.record.notified.withLock { $0.count } == 1 }
        await peripheral.stop()
        bluez.bus.close()
    }

    @Test("A central that unsubscribed and stays unsubscribed past the grace loses its link with a clear error")
    func unsubscribedPastGrace() async throws {
        let fixture = try await Fixture.start(resubscribeGrace: .milliseconds(300))
        defer { fixture.daemon.stop() }
        let (bluez, peripheral, name) = (fixture.bluez, fixture.peripheral, fixture.name)
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StartNotify")
        try await bluez.write(name, [1])
        var links = peripheral.links.makeAsyncIterator()
        let link = try #require(await links.next())
        _ = try await bluez.callApp(name, GATTApplication.outbox, "org.bluez.GattCharacteristic1", "StopNotify")
        let error = await #expect(throws: BluetoothFailure.self) { try await link.write([[0xC1]]) }
        #expect(error?.description.contains("did not subscribe again") == true)
        await peripheral.stop()
        bluez.bus.close()
    }

    private static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A private bus with the stand-in bluetoothd and a registered peripheral on it.
    struct Fixture {
        let daemon: PrivateBusDaemon
        let bluez: FakeBlueZ
        let peripheral: GATTPeripheral
        /// The peripheral's unique bus name, where bluetoothd's calls go.
        let name: String

        static func start(resubscribeGrace: Duration = GATTPeripheral.defaultResubscribeGrace, logger: Logger = quiet) async throws -> Fixture {
            let daemon = try PrivateBusDaemon()
            let bluez = try await FakeBlueZ(address: daemon.address)
            let peripheral = try await GATTPeripheral.start(adapter: "hci0", bus: daemon.address, resubscribeGrace: resubscribeGrace, logger: logger)
            let name = try await PeripheralBusTests.peripheralName(bluez, excluding: bluez.bus.uniqueName)
            return Fixture(daemon: daemon, bluez: bluez, peripheral: peripheral, name: name)
        }
    }

    private func chunk(_ item: LinkInbound) -> [UInt8]? {
        if case .chunk(let bytes) = item { return bytes }
        return nil
    }

    /// The peripheral's unique name: the bus's only other client.
    private static func peripheralName(_ bluez: FakeBlueZ, excluding own: String) async throws -> String {
        let names = try await bluez.bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames")
        let unique = (names.first?.stringArrayValue ?? []).filter { $0.hasPrefix(":") && $0 != own }
        return try #require(unique.sorted().last)
    }
}
