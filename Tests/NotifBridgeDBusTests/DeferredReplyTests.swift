import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing

/// Handlers that answer later: the bus thread stays free meanwhile (it serves other calls and
/// the handler's own calls), only the first answer counts, and a forgotten one still answers.
@Suite(
    "Deferred replies on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct DeferredReplyTests {
    /// Calls the handler kept without answering; a class, since Mutex cannot be copied into it.
    final class Kept: Sendable {
        let replies = Mutex<[DeferredReply]>([])
    }

    @Test("a deferred call is answered later, after the server used its own connection meanwhile")
    func answeredLater() async throws {
        let bus = try await BusPair.open()
        defer { bus.close() }
        let (server, client) = (bus.server, bus.client)
        let kept = Kept()
        try await server.exportObject(at: "/org/notifbridge/later") { call in
            switch call.member {
            case "Later":
                guard let reply = call.deferredReply else { return .error(name: "org.notifbridge.Error.NoDeferral", message: "") }
                kept.replies.withLock { $0.append(reply) }
                return .deferred
            case "Now":
                return .values([.string("now")])
            default:
                return .notHandled
            }
        }
        let pending = Task {
            try await client.call(destination: server.uniqueName, path: "/org/notifbridge/later", interface: nil, member: "Later")
        }
        while kept.replies.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        // The bus thread is free: another call is answered while the first waits, and the
        // server's own call to itself (as a GATT server's notify would be) goes through.
        #expect(try await client.call(destination: server.uniqueName, path: "/org/notifbridge/later", interface: nil, member: "Now") == [.string("now")])
        #expect(try await server.call(destination: server.uniqueName, path: "/org/notifbridge/later", interface: nil, member: "Now") == [.string("now")])
        let reply = try #require(kept.replies.withLock { $0.first })
        reply.send(.values([.uint32(42)]))
        reply.send(.values([.uint32(43)]))
        #expect(try await pending.value == [.uint32(42)], "the first answer counts")
    }

    @Test("a deferred error reply arrives with its name, and a reply never sent fails the call instead of timing out")
    func errorsAndForgotten() async throws {
        let bus = try await BusPair.open()
        defer { bus.close() }
        let (server, client) = (bus.server, bus.client)
        try await server.exportObject(at: "/org/notifbridge/later") { call in
            guard let reply = call.deferredReply else { return .notHandled }
            if call.member == "Refuse" {
                Task { reply.send(.error(name: "org.bluez.Error.Failed", message: "ANCS error 0xA1")) }
            }
            // "Forget": the last reference to the reply goes with this call.
            return .deferred
        }
        let refused = await #expect(throws: DBusError.self) {
            try await client.call(destination: server.uniqueName, path: "/org/notifbridge/later", interface: nil, member: "Refuse")
        }
        #expect(refused == .errorReply(name: "org.bluez.Error.Failed", message: "ANCS error 0xA1"))
        let forgotten = await #expect(throws: DBusError.self) {
            try await client.call(destination: server.uniqueName, path: "/org/notifbridge/later", interface: nil, member: "Forget", timeout: .seconds(10))
        }
        guard case .errorReply(let name, let message)? = forgotten else { Issue.record("expected an error reply"); return }
        #expect(name == "org.freedesktop.DBus.Error.Failed")
        #expect(message.contains("never answered"), "\(message)")
    }
}
