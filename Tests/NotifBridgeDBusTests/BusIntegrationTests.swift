import Dispatch
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing

/// Connections talking through a private dbus-daemon: exported objects, error replies, signals
/// and matches, a call to itself, and closing with a call in flight.
@Suite(
    "D-Bus connections on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(2))
)
struct BusIntegrationTests {
    static let testInterface = "org.notifbridge.Test1"

    /// The error name a call failed with, or nil if it failed differently.
    private func errorName(_ error: DBusError?) -> String? {
        if case .errorReply(let name, _) = error { name } else { nil }
    }

    @Test("an exported object answers calls with bytes, error replies and UnknownMethod")
    func exportedObject() async throws {
        let bus = try await BusPair.open()
        defer { bus.close() }
        let (server, client) = (bus.server, bus.client)
        try await server.requestName("org.notifbridge.Test")

        let seen = Mutex<[MethodCall]>([])
        let registration = try await server.exportObject(at: "/org/notifbridge/test") { call in
            seen.withLock { $0.append(call) }
            guard call.interface == Self.testInterface else { return .notHandled }
            switch call.member {
            case "WriteValue":
                guard let arguments = try? call.arguments(matching: "aya{sv}"), let bytes = arguments[0].bytesValue,
                    let options = try? arguments[1].asProperties()
                else { return .invalidArguments("expected aya{sv}, got \(call.signature)") }
                return .values([.bytes(bytes.reversed()), .properties(["count": .uint32(UInt32(bytes.count)), "echo": options["offset"] ?? .bool(false)])])
            case "Refuse": return .error(name: "org.bluez.Error.NotPermitted", message: "refused")
            case "BadErrorName": return .error(name: "not an error name", message: "bad")
            case "Unencodable": return .values([.array(element: "s", [.byte(1)])])
            default: return .notHandled
            }
        }

        func call(_ member: String, _ arguments: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
            try await client.call(
                destination: "org.notifbridge.Test", path: "/org/notifbridge/test/char0", interface: Self.testInterface,
                member: member, arguments: arguments, timeout: .seconds(30)
            )
        }

        let reply = try await call("WriteValue", [.bytes([0, 1, 2, 255]), .properties(["offset": .uint16(3)])])
        #expect(reply == [.bytes([255, 2, 1, 0]), .properties(["count": .uint32(4), "echo": .uint16(3)])])
        let received = try #require(seen.withLock { $0.first })
        #expect(received.path == "/org/notifbridge/test/char0")
        #expect(received.sender == client.uniqueName)
        #expect(received.arguments == [.bytes([0, 1, 2, 255]), .properties(["offset": .uint16(3)])])

        var error = await #expect(throws: DBusError.self) { try await call("NoSuchMethod") }
        #expect(errorName(error) == DBusErrorName.unknownMethod)
        error = await #expect(throws: DBusError.self) { try await call("WriteValue", [.string("not bytes")]) }
        #expect(errorName(error) == DBusErrorName.invalidArgs)
        await #expect(throws: DBusError.errorReply(name: "org.bluez.Error.NotPermitted", message: "refused")) {
            try await call("Refuse")
        }
        error = await #expect(throws: DBusError.self) { try await call("BadErrorName") }
        #expect(errorName(error) == DBusErrorName.failed)
        error = await #expect(throws: DBusError.self) { try await call("Unencodable") }
        #expect(errorName(error) == DBusErrorName.failed)

        await registration.cancel()
        error = await #expect(throws: DBusError.self) { try await call("WriteValue", [.bytes([]), .properties([:])]) }
        #expect([DBusErrorName.unknownObject, DBusErrorName.unknownMethod].contains(errorName(error)))
    }

    @Test("an emitted PropertiesChanged reaches a subscriber through its match rule")
    func propertiesChangedSignal() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let emitter = try await DBusConnection.connect(to: daemon.address)
        defer { emitter.close() }
        let listener = try await DBusConnection.connect(to: daemon.address)
        defer { listener.close() }

        let (signals, sink) = AsyncStream.makeStream(of: DBusSignal.self)
        let path = "/org/notifbridge/app/svc0/chr0"
        try await listener.subscribe(
            matchRule: "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='\(path)'"
        ) { sink.yield($0) }

        try await emitter.emit(DBusSignal(path: "/elsewhere", interface: "org.notifbridge.Other", member: "Ignored"))
        try await emitter.emit(
            .propertiesChanged(path: path, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([0, 0x63, 0xFF])])
        )
        let signal = try #require(try await firstElement(of: signals, within: .seconds(30)), "no PropertiesChanged within 30 s")
        #expect(signal.path == path)
        #expect(signal.sender == emitter.uniqueName)
        let parts = try signal.asPropertiesChanged()
        #expect(parts.interface == "org.bluez.GattCharacteristic1")
        #expect(parts.changed == ["Value": .bytes([0, 0x63, 0xFF])])
        #expect(parts.invalidated.isEmpty)

        await #expect(throws: DBusError.self) {
            try await emitter.emit(DBusSignal(path: path, interface: "no-dots", member: "Changed"))
        }
        await #expect(throws: DBusError.self) {
            try await listener.subscribe(matchRule: "type='signal',bogus") { _ in }
        }
    }

    @Test("a connection serves calls to itself while its own call is pending")
    func callToItself() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let connection = try await DBusConnection.connect(to: daemon.address)
        defer { connection.close() }
        try await connection.exportObject(at: "/org/notifbridge/self", includingChildren: false) { call in
            call.member == "Ping" ? .values([.string("pong"), .objectPath(call.path)]) : .notHandled
        }
        let reply = try await connection.call(
            destination: connection.uniqueName, path: "/org/notifbridge/self", interface: Self.testInterface,
            member: "Ping", timeout: .seconds(30)
        )
        #expect(reply == [.string("pong"), .objectPath("/org/notifbridge/self")])
    }

    @Test("a call the peer does not answer in time fails with NoReply")
    func callTimeout() async throws {
        let bus = try await BusPair.open()
        defer { bus.close() }
        let (server, client) = (bus.server, bus.client)

        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        try await server.exportObject(at: "/org/notifbridge/slow") { _ in
            _ = release.wait(timeout: .now() + 60)
            return .empty
        }
        let error = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: server.uniqueName, path: "/org/notifbridge/slow", interface: nil, member: "Wait",
                timeout: .milliseconds(300)
            )
        }
        #expect(errorName(error) == DBusErrorName.noReply)
    }

    @Test("closing fails a call in flight and every later operation with .closed")
    func closeWithPendingCall() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let server = try await DBusConnection.connect(to: daemon.address)
        defer { server.close() }
        let client = try await DBusConnection.connect(to: daemon.address)

        let (entered, enteredSink) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        try await server.exportObject(at: "/org/notifbridge/slow") { _ in
            enteredSink.yield()
            _ = release.wait(timeout: .now() + 60)
            return .empty
        }
        let pending = Task {
            try await client.call(destination: server.uniqueName, path: "/org/notifbridge/slow", interface: nil, member: "Wait")
        }
        #expect(try await firstElement(of: entered, within: .seconds(30)) != nil, "the server never saw the call")
        client.close()
        let outcome = await pending.result
        #expect(throws: DBusError.closed) { try outcome.get() }
        #expect(client.isClosed)
        await #expect(throws: DBusError.closed) {
            try await client.call(destination: server.uniqueName, path: "/", interface: nil, member: "Any")
        }
        await #expect(throws: DBusError.closed) {
            try await client.emit(DBusSignal(path: "/", interface: "org.notifbridge.Test1", member: "After"))
        }
    }
}

@Suite("D-Bus connection failures")
struct ConnectionFailureTests {
    @Test("connecting to an address where no bus listens throws instead of hanging")
    func noDaemon() async {
        await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/notifbridge/bus"))
        }
    }
}
