import Logging
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing
@testable import NotifBridgeBLE

/// The pairing agent against a stand-in for bluetoothd that records how it is registered and
/// then calls it as bluetoothd does while an iPhone pairs.
@Suite(
    "Pairing agent on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct PairingAgentBusTests {
    static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_02"
    static let otherDevice = "/org/bluez/hci0/dev_00_AA_01_01_00_03"
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// bluetoothd's side: AgentManager1 and the adapter's properties.
    final class FakeBlueZ: Sendable {
        /// What bluetoothd saw, behind a class so the bus thread's handlers can share it.
        final class Record: Sendable {
            let calls = Mutex<[String]>([])
            let agentName = Mutex<String?>(nil)
        }

        let bus: DBusConnection
        let record = Record()
        var calls: [String] { record.calls.withLock { $0 } }

        init(address: DBusBusAddress) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName("org.bluez")
            let record = self.record
            for path in ["/org/bluez", "/org/bluez/hci0"] {
                try await bus.exportObject(at: path) { call in
                    let detail = call.arguments.map(Self.text).joined(separator: " ")
                    record.calls.withLock { $0.append("\(call.member) \(detail)") }
                    if call.member == "RegisterAgent" { record.agentName.withLock { $0 = call.sender } }
                    return .empty
                }
            }
        }

        /// A value as the recorded call shows it: strings and paths bare, variants unwrapped.
        static func text(_ value: DBusValue) -> String {
            switch value {
            case .variant(let inner): text(inner)
            case .bool(let flag): String(flag)
            case .uint32(let number): String(number)
            default: value.stringValue ?? "\(value)"
            }
        }

        /// Calls the agent as bluetoothd would; returns the D-Bus error name, or nil on success.
        func agent(_ member: String, _ arguments: [DBusValue]) async throws -> String? {
            let name = try #require(record.agentName.withLock { $0 })
            do {
                _ = try await bus.call(destination: name, path: PairingAgent.path, interface: PairingAgent.agentInterface, member: member, arguments: arguments)
                return nil
            } catch {
                let reply: DBusError = error
                if case .errorReply(let errorName, _) = reply { return errorName }
                return "\(reply)"
            }
        }
    }

    @Test("Registers as the default DisplayOnly agent, makes the adapter pairable for the window, shows the passkey once")
    func inWindow() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address)
        let passkeys = Mutex<[String]>([])
        let agent = try await PairingAgent.start(adapter: "hci0", window: .milliseconds(60_500), bus: daemon.address, logger: Self.quiet) { _, passkey in
            passkeys.withLock { $0.append(passkey) }
        }
        #expect(bluez.calls == [
            "RegisterAgent \(PairingAgent.path) DisplayOnly", "RequestDefaultAgent \(PairingAgent.path)",
            "Set org.bluez.Adapter1 PairableTimeout 61", "Set org.bluez.Adapter1 Pairable true",
        ])
        #expect(try await bluez.agent("DisplayPasskey", [.objectPath(Self.device), .uint32(42), .uint16(0)]) == nil)
        #expect(try await bluez.agent("DisplayPasskey", [.objectPath(Self.device), .uint32(42), .uint16(3)]) == nil)
        #expect(passkeys.withLock { $0 } == ["000042"], "shown once, with its leading zeros, however often the iPhone reports typing")
        #expect(try await bluez.agent("RequestAuthorization", [.objectPath(Self.device)]) == PairingAgent.rejected, "Just Works has no passkey to check")
        // A pairing tried again comes with a new passkey: it is shown too.
        #expect(try await bluez.agent("DisplayPasskey", [.objectPath(Self.device), .uint32(654_321), .uint16(0)]) == nil)
        #expect(passkeys.withLock { $0 } == ["000042", "654321"])
        // Numeric comparison, never expected of a display-only agent: the number is shown, not accepted unseen.
        #expect(try await bluez.agent("RequestConfirmation", [.objectPath(Self.otherDevice), .uint32(7_007)]) == nil)
        #expect(passkeys.withLock { $0 } == ["000042", "654321", "007007"])
        #expect(try await bluez.agent("RequestConfirmation", [.objectPath(Self.otherDevice), .uint32(1_000_000)]) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(try await bluez.agent("AuthorizeService", [.objectPath(Self.device), .string("7905f431-b5ce-4e99-a40f-4b1e122d00d0")]) == nil)
        #expect(try await bluez.agent("RequestPasskey", [.objectPath(Self.device)]) == PairingAgent.rejected, "a display-only accessory types nothing")
        #expect(try await bluez.agent("DisplayPasskey", [.objectPath(Self.device), .uint32(1_000_000), .uint16(0)]) == "org.freedesktop.DBus.Error.InvalidArgs")
        await agent.stop()
        #expect(bluez.calls.last == "UnregisterAgent \(PairingAgent.path)")
    }

    @Test("Outside the window every pairing request is rejected")
    func afterWindow() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address)
        let agent = try await PairingAgent.start(adapter: "hci0", window: .milliseconds(100), bus: daemon.address, logger: Self.quiet) { _, _ in
            Issue.record("no passkey is shown after the window")
        }
        try await Task.sleep(for: .milliseconds(150))
        for (member, arguments) in [
            ("RequestAuthorization", [DBusValue.objectPath(Self.device)]), ("RequestConfirmation", [.objectPath(Self.device), .uint32(7)]),
            ("DisplayPasskey", [.objectPath(Self.device), .uint32(7), .uint16(0)]), ("AuthorizeService", [.objectPath(Self.device), .string("x")]),
        ] {
            #expect(try await bluez.agent(member, arguments) == PairingAgent.rejected, "\(member)")
        }
        await agent.stop()
    }

    @Test("Windows and adapter names are checked before anything is registered", arguments: [
        ("hci0", Duration.zero), ("hci0", PairingAgent.maxWindow + .seconds(1)), ("usb0", Duration.seconds(60)),
    ])
    func refusedArguments(adapter: String, window: Duration) async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address)
        await #expect(throws: BluetoothFailure.self) {
            _ = try await PairingAgent.start(adapter: adapter, window: window, bus: daemon.address, logger: Self.quiet) { _, _ in }
        }
        #expect(bluez.calls.isEmpty)
    }

    @Test("PairableTimeout rounds a fraction up", arguments: [
        (Duration.seconds(1), UInt32(1)), (.milliseconds(1001), UInt32(2)), (PairingAgent.maxWindow, UInt32(3600)),
    ] as [(Duration, UInt32)])
    func wholeSeconds(_ window: Duration, seconds: UInt32) {
        #expect(PairingAgent.wholeSeconds(window) == seconds)
    }
}
