import Logging
import NotifBridgeANCS
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import NotifBridgeTestSupport
import Synchronization
import Testing
@testable import NotifBridgeBLE

/// The simulated iPhone's ANCS service against a stand-in for bluetoothd that registers it and
/// then calls it as bluetoothd does for a remote GATT client (the accessory).
@Suite(
    "ANCS server on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct ANCSServerBusTests {
    final class FakeBlueZ: Sendable {
        /// What bluetoothd saw, behind a class so the bus thread's handlers can share it.
        final class Record: Sendable {
            let registered = Mutex<[String]>([])
            let notified = Mutex<[(String, [UInt8])]>([])
        }

        /// The Control Point writes the server's owner was asked about.
        final class Shared: Sendable {
            let writes = Mutex<[[UInt8]]>([])
        }

        let bus: DBusConnection
        let record = Record()

        init(address: DBusBusAddress) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName("org.bluez")
            let record = self.record
            try await bus.exportObject(at: "/org/bluez") { call in
                switch call.member {
                case "RegisterApplication", "UnregisterApplication":
                    record.registered.withLock { $0.append(call.member) }
                    return .empty
                case "Set":
                    return .empty
                default:
                    return .notHandled
                }
            }
        }

        func watch(_ server: String) async throws {
            let record = self.record
            try await bus.subscribe(matchRule: "type='signal',sender='\(server)',member='PropertiesChanged'") { signal in
                if let value = try? signal.asPropertiesChanged().changed["Value"]?.bytesValue {
                    record.notified.withLock { $0.append((signal.path, value)) }
                }
            }
        }

        func call(_ server: String, _ path: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await bus.call(destination: server, path: path, interface: member == "GetManagedObjects" ? BlueZ.objectManager : BlueZ.gattCharacteristic,
                               member: member, arguments: arguments)
        }

        func writeControlPoint(_ server: String, _ value: [UInt8], mtu: UInt16 = 50) async throws {
            _ = try await call(server, ANCSServerApplication.controlPoint, "WriteValue",
                               [.bytes(value), .properties(["device": .objectPath("/org/bluez/hci1/dev_00_AA_01_00_00_00"), "mtu": .uint16(mtu), "type": .string("request")])])
        }
    }

    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("Registration, subscriptions in order, Control Point answered and rejected, values split by the MTU")
    func server() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address)
        let writes = FakeBlueZ.Shared()
        let server = try await ANCSGATTServer.start(adapter: "hci1", bus: daemon.address, logger: Self.quiet) { bytes in
            writes.writes.withLock { $0.append(bytes) }
            // Answers after a suspension: the reply is deferred, not computed on the bus thread.
            try? await Task.sleep(for: .milliseconds(20))
            return bytes.first == 0 ? .accepted : .rejected(attError: 0xA1)
        }
        #expect(bluez.record.registered.withLock { $0 } == ["RegisterApplication"])
        let name = try await Self.serverName(bluez)
        let objects = try #require(try await bluez.call(name, ANCSServerApplication.application, "GetManagedObjects").first).asManagedObjects()
        let uuids = Set(objects.values.compactMap { ($0[BlueZ.gattCharacteristic] ?? $0[BlueZ.gattService])?["UUID"]?.stringValue })
        #expect(uuids == [ANCSUUID.service, ANCSUUID.notificationSource, ANCSUUID.controlPoint, ANCSUUID.dataSource])

        await #expect(throws: BluetoothFailure.self) { try await server.notify(.notificationSource, [1]) }
        try await bluez.watch(name)
        _ = try await bluez.call(name, ANCSServerApplication.dataSource, "StartNotify")
        _ = try await bluez.call(name, ANCSServerApplication.notificationSource, "StartNotify")
        var subscriptions = server.subscriptions.makeAsyncIterator()
        let first = await subscriptions.next()
        let second = await subscriptions.next()
        #expect(first?.0 == .dataSource && first?.subscribed == true)
        #expect(second?.0 == .notificationSource && second?.subscribed == true)

        try await bluez.writeControlPoint(name, [0, 1, 2, 3], mtu: 50)
        let refusal = await #expect(throws: DBusError.self) { try await bluez.writeControlPoint(name, [1, 2]) }
        guard case .errorReply(let errorName, let message)? = refusal else { Issue.record("no error reply"); return }
        #expect(errorName == "org.bluez.Error.Failed")
        #expect(message.contains("0xA1"), "\(message)")
        #expect(writes.writes.withLock { $0 } == [[0, 1, 2, 3], [1, 2]])

        let reply = (0..<600).map { UInt8($0 % 251) }
        try await server.notify(.notificationSource, [0, 0, 0, 1, 7, 0, 0, 0])
        try await server.notify(.dataSource, reply)
        try await TestWait.until("1 + 13 notifications") { bluez.record.notified.withLock { $0.count } == 1 + 13 }
        let notified = bluez.record.notified.withLock { $0 }
        #expect(notified.first?.0 == ANCSServerApplication.notificationSource)
        #expect(notified.dropFirst().allSatisfy { $0.0 == ANCSServerApplication.dataSource && $0.1.count <= 47 })
        #expect(notified.dropFirst().flatMap(\.1) == reply, "47-byte pieces (MTU 50 − 3), in order, nothing lost")

        _ = try await bluez.call(name, ANCSServerApplication.dataSource, "StopNotify")
        let third = await subscriptions.next()
        #expect(third?.0 == .dataSource && third?.subscribed == false)
        await #expect(throws: BluetoothFailure.self) { try await server.notify(.dataSource, [1]) }
        await server.stop()
        #expect(bluez.record.registered.withLock { $0 } == ["RegisterApplication", "UnregisterApplication"])
        bluez.bus.close()
    }

    private static func serverName(_ bluez: FakeBlueZ) async throws -> String {
        let names = try await bluez.bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames")
        let unique = (names.first?.stringArrayValue ?? []).filter { $0.hasPrefix(":") && $0 != bluez.bus.uniqueName }
        return try #require(unique.sorted().last)
    }
}
