import Logging
import NotifBridgeANCS
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import NotifBridgeLogGate
import NotifBridgeTestSupport
import Synchronization
import Testing
@testable import NotifBridgeBLE

/// The accessory's ANCS client against a stand-in for bluetoothd that exports an iPhone's ANCS
/// characteristics, as bluetoothd does after resolving the services of an incoming connection.
@Suite(
    "ANCS client on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct ANCSClientBusTests {
    static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    static let service = device + "/service0020"
    static let notificationSource = service + "/char0021"
    static let controlPoint = service + "/char0024"
    static let dataSource = service + "/char0026"

    final class FakeBlueZ: Sendable {
        struct Record: Sendable {
            var objects: DBusManagedObjects = [:]
            var startNotify: [String] = []
            var stopNotify: [String] = []
            /// Characteristics whose StartNotify fails, as a device that refuses the CCCD write.
            var refused: Set<String> = []
            var writes: [[UInt8]] = []
        }

        /// The record behind a class, so the bus thread's handler can share it.
        final class Shared: Sendable {
            let state = Mutex(Record())
        }

        let bus: DBusConnection
        let shared = Shared()

        init(address: DBusBusAddress, exported: Bool) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName("org.bluez")
            if exported { shared.state.withLock { $0.objects = Self.ancsObjects() } }
            let shared = self.shared
            try await bus.exportObject(at: "/") { call in
                shared.state.withLock { record in
                    switch (call.path, call.member) {
                    case ("/", "GetManagedObjects"):
                        return .values([.managedObjects(record.objects)])
                    case (_, "StartNotify"):
                        record.startNotify.append(call.path)
                        return record.refused.contains(call.path) ? .error(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e") : .empty
                    case (_, "StopNotify"):
                        record.stopNotify.append(call.path)
                        return .empty
                    case (ANCSClientBusTests.controlPoint, "WriteValue"):
                        let value = call.arguments.first?.bytesValue ?? []
                        record.writes.append(value)
                        guard call.arguments.count == 2, (try? call.arguments[1].asProperties())?["type"]?.stringValue == "request" else {
                            return .invalidArguments("expected a write request")
                        }
                        return value.first == 0xFF ? .error(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80") : .empty
                    default:
                        return .notHandled
                    }
                }
            }
        }

        static func ancsObjects() -> DBusManagedObjects {
            [
                device: [BlueZ.device: ["Connected": .bool(true), "ServicesResolved": .bool(true)]],
                service: [BlueZ.gattService: ["UUID": .string(ANCSUUID.service)]],
                notificationSource: [BlueZ.gattCharacteristic: ["UUID": .string(ANCSUUID.notificationSource.uppercased())]],
                controlPoint: [BlueZ.gattCharacteristic: ["UUID": .string(ANCSUUID.controlPoint)]],
                dataSource: [BlueZ.gattCharacteristic: ["UUID": .string(ANCSUUID.dataSource)]],
            ]
        }

        /// The iPhone's services resolved: InterfacesAdded for each object, device first.
        func export() async throws {
            let objects = Self.ancsObjects()
            shared.state.withLock { $0.objects = objects }
            for path in [ANCSClientBusTests.device, ANCSClientBusTests.service, ANCSClientBusTests.notificationSource,
                         ANCSClientBusTests.controlPoint, ANCSClientBusTests.dataSource] {
                try await bus.emit(DBusSignal(path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded",
                                              arguments: [.objectPath(path), .interfaces(objects[path] ?? [:])]))
            }
        }

        func notify(_ path: String, _ value: [UInt8]) async throws {
            try await bus.emit(.propertiesChanged(path: path, interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(value)]))
        }

        func removeService() async throws {
            try await bus.emit(DBusSignal(path: "/", interface: BlueZ.objectManager, member: "InterfacesRemoved",
                                          arguments: [.objectPath(ANCSClientBusTests.service), .stringArray([BlueZ.gattService])]))
        }
    }

    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("Services resolved after start: Data Source then Notification Source, ready, bytes both ways, a refused write, a disconnect")
    func resolvedAfterStart() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, exported: false)
        let client = try await ANCSGATTClient.start(adapter: "hci0", bus: daemon.address, logger: Self.quiet)
        var events = client.events.makeAsyncIterator()
        try await bluez.export()
        #expect(await events.next() == .ready(device: Self.device))
        #expect(bluez.shared.state.withLock { $0.startNotify } == [Self.dataSource, Self.notificationSource])

        try await bluez.notify(Self.notificationSource, [0, 0, 0, 1, 1, 0, 0, 0])
        try await bluez.notify(Self.dataSource, Array(repeating: 7, count: 182))
        try await bluez.notify(Self.controlPoint, [9])
        #expect(await events.next() == .notificationSource(device: Self.device, [0, 0, 0, 1, 1, 0, 0, 0]))
        #expect(await events.next() == .dataSource(device: Self.device, Array(repeating: 7, count: 182)))

        try await client.writeControlPoint([0, 1, 0, 0, 0, 1], device: Self.device)
        let failure = await #expect(throws: ControlPointFailure.self) { try await client.writeControlPoint([0xFF], device: Self.device) }
        #expect(failure?.errorName == "org.bluez.Error.Failed")
        #expect(failure?.attError == 0x80)
        #expect(bluez.shared.state.withLock { $0.writes } == [[0, 1, 0, 0, 0, 1], [0xFF]])
        await #expect(throws: BluetoothFailure.self) { try await client.writeControlPoint([0], device: "/org/bluez/hci0/dev_11_22_33_44_55_66") }
        await #expect(throws: BluetoothFailure.self) { try await client.writeControlPoint(Array(repeating: 0, count: 513), device: Self.device) }

        try await bluez.bus.emit(.propertiesChanged(path: Self.device, interface: BlueZ.device, changed: ["Connected": .bool(false)]))
        #expect(await events.next() == .gone(device: Self.device))
        await #expect(throws: BluetoothFailure.self) { try await client.writeControlPoint([0], device: Self.device) }
        await client.stop()
        #expect(await events.next() == nil)
        bluez.bus.close()
    }

    /// A central posing as an iPhone can accept one subscription and refuse the other. The half
    /// it took is undone, and what it sends anyway is logged a few lines at a time.
    @Test("Notification Source refused: Data Source is unsubscribed again, and its values are logged a few at a time")
    func halfSubscribed() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, exported: false)
        bluez.shared.state.withLock { $0.refused = [Self.notificationSource] }
        let log = CapturedLog()
        let client = try await ANCSGATTClient.start(adapter: "hci0", bus: daemon.address, logger: Logger(label: "test", factory: { _ in log }))
        try await bluez.export()
        try await TestWait.until("Data Source to be unsubscribed") { bluez.shared.state.withLock { $0.stopNotify } == [Self.dataSource] }
        for _ in 0..<200 { try await bluez.notify(Self.dataSource, [1, 2, 3]) }
        try await TestWait.until("the values to be read") { log.messages(at: .notice).count >= LogThrottle().burst - 1 }
        try await Task.sleep(for: .milliseconds(300))
        let lines = log.messages(at: .notice).filter { $0.contains("ignored an ANCS value") }
        // Four in the first 10 s window (the refusal's error line took the fifth); a busy test run
        // may spread the 200 values over a few windows.
        #expect((LogThrottle().burst - 1...LogThrottle().burst * 4).contains(lines.count), "\(lines.count) lines")
        await client.stop()
        bluez.bus.close()
    }

    @Test("A service already resolved at start is found; removing it mid-reply reports the device gone")
    func serviceRemovedMidStream() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, exported: true)
        let client = try await ANCSGATTClient.start(adapter: "hci0", bus: daemon.address, logger: Self.quiet)
        var events = client.events.makeAsyncIterator()
        #expect(await events.next() == .ready(device: Self.device))
        #expect(bluez.shared.state.withLock { $0.startNotify } == [Self.dataSource, Self.notificationSource])
        try await bluez.notify(Self.dataSource, [1, 2, 3])
        try await bluez.removeService()
        try await bluez.notify(Self.dataSource, [4, 5, 6])
        #expect(await events.next() == .dataSource(device: Self.device, [1, 2, 3]))
        #expect(await events.next() == .gone(device: Self.device))
        await client.stop()
        #expect(await events.next() == nil, "nothing after gone: the later value belongs to no subscription")
        bluez.bus.close()
    }

    /// Nothing reads the events: the newest `maxBufferedEvents` are kept. A Control Point
    /// write is answered after every earlier signal was handled, so it marks when they all were.
    @Test("Unread events: the limit is kept whole, one more drops the oldest", arguments: [0, 1])
    func eventsBounded(extra: Int) async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, exported: true)
        let client = try await ANCSGATTClient.start(adapter: "hci0", bus: daemon.address, logger: Self.quiet)
        var events = client.events.makeAsyncIterator()
        #expect(await events.next() == .ready(device: Self.device))
        let count = ANCSGATTClient.maxBufferedEvents + extra
        for n in 0..<count {
            try await bluez.notify(Self.notificationSource, [UInt8(n & 0xFF), UInt8(n >> 8)])
        }
        try await client.writeControlPoint([0], device: Self.device)
        for n in extra..<count {
            let event = await events.next()
            #expect(event == .notificationSource(device: Self.device, [UInt8(n & 0xFF), UInt8(n >> 8)]))
            if event != .notificationSource(device: Self.device, [UInt8(n & 0xFF), UInt8(n >> 8)]) { break }
        }
        await client.stop()
        #expect(await events.next() == nil)
        bluez.bus.close()
    }
}
