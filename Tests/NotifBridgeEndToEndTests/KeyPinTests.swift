import Foundation
import NotifBridgeAccessory
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// `phone --transport lan --key-id`: a DNS-SD record names a key, but anyone on the network can
/// publish one. The link holds the exchange to that key, and nothing is sealed to any other,
/// not even what was waiting to be sent when the link came up.
@Suite("A link pinned to the accessory's key", .timeLimit(.minutes(1)))
struct KeyPinTests {
    @Test("The key asked for: established and stored; any other: closed, nothing sent", arguments: [true, false])
    func pinned(matching: Bool) async throws {
        let directory = try TemporaryDirectory("pin")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        var wanted = Data(accessory.daemon.keyID)
        if !matching { wanted[wanted.startIndex] ^= 0x01 }
        let outcome: Result<Void, any Error> = await {
            do {
                _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(), accessoryKeyID: wanted) { phone in
                    // Queued before the exchange: establishing sends it.
                    let sequence = try phone.send(.add(TestHost.note("pinned"), .standard))
                    try await phone.waitUntilEstablished()
                    _ = try await phone.waitForReceipts([sequence])
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }()
        if matching {
            #expect(throws: Never.self) { try outcome.get() }
            #expect(try accessory.daemon.store.notifications().count == 1)
        } else {
            #expect(throws: (any Error).self) { try outcome.get() }
            if case .failure(let error) = outcome { #expect("\(error)".contains("is not the one asked for"), "\(error)") }
            // Time for anything sent to have been stored.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try accessory.daemon.store.notifications().isEmpty, "a notification reached an accessory with another key")
        }
    }

    /// The link's end is the session's doing here, not the body's: a body that never looks at
    /// the events (it sends, then sleeps) must not keep the connection open with it.
    @Test("Another key: the link closes although the body is not waiting on its events")
    func closedWithoutWaiting() async throws {
        let directory = try TemporaryDirectory("pin-close")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        var wanted = Data(accessory.daemon.keyID)
        wanted[wanted.startIndex] ^= 0x01
        let daemon = accessory.daemon
        // The phone's `.closed` event comes once it has seen the accessory's key, so the
        // accessory holds the connection by then; only the close that follows may end it.
        let refused = Mutex(false)
        let closed = try await HostClient.connect(
            host: "127.0.0.1", port: accessory.port, session: TestHost.session(), accessoryKeyID: wanted,
            onEvent: { if case .closed = $0 { refused.withLock { $0 = true } } }
        ) { phone in
            try phone.send(.add(TestHost.note("unwaited"), .standard))
            // Never reads the phone's events: polls the accessory's side, up to 20 s.
            for _ in 0..<200 {
                try await Task.sleep(for: .milliseconds(100))
                if refused.withLock({ $0 }), daemon.openConnectionCount == 0 { return true }
            }
            return false
        }.0
        #expect(closed, "the accessory still had the connection open while the body slept")
        #expect(try accessory.daemon.store.notifications().isEmpty)
    }
}
