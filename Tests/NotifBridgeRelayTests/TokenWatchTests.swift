import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
@testable import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// The open inboxes' tokens are checked together: one store lookup a pass for all of them, and
/// no per-inbox query once they are open.
@Suite struct TokenWatchTests {
    /// RFC 6455 allows 123 bytes of reason in a close frame; a longer one is cut at a character.
    @Test("a close reason is at most 123 bytes, cut between characters", arguments: [61, 62, 200])
    func closeReasonLength(characters: Int) {
        let text = String(repeating: "é", count: characters)  // two bytes each
        let reason = InboxConnection.Ending.goingAway(text).closeReason
        #expect(reason.utf8.count == min(2 * characters, 122))
        #expect(text.hasPrefix(reason))
        #expect(InboxConnection.Ending.refused(RelayError(.malformed, "short")).closeReason == "short")
    }

    @Test("three open inboxes: each pass is one lookup naming all three, and nothing asks per inbox")
    func onePassOneLookup() async throws {
        let directory = try TemporaryDirectory("relay-token-watch")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite")
        defer { try? store.close() }
        let ids = ["watch-1", "watch-2", "watch-3"]
        let tokens = try ids.indices.map { index in
            (inbox: try RelayToken(randomBytes: Array(repeating: UInt8(0x10 + index), count: 32)),
             post: try RelayToken(randomBytes: Array(repeating: UInt8(0x20 + index), count: 32)))
        }
        for (id, token) in zip(ids, tokens) { try store.register(accessory: id, inbox: token.inbox, post: token.post) }
        let counting = CountingStore(store)
        let server = RelayServer(store: counting, configuration: .init(port: 0, tokenCheckInterval: .milliseconds(50)), logger: Logger(label: "relay-test"))
        try await server.application().test(.live) { client in
            var readers: [Task<WebSocketCloseFrame?, any Error>] = []
            for (id, token) in zip(ids, tokens) {
                _ = try await RelayServerTests.post(client, relayMessage(1), token: token.post.text, to: id)
                let (reader, delivered) = try RelayServerTests.openInbox(client, accessory: id, token: token.inbox.text)
                for await _ in delivered { break }
                readers.append(reader)
            }
            let before = counting.snapshot
            // Passes, not time: on a busy machine a 50 ms interval may stretch to seconds.
            try await TestWait.until("three passes of the token check") { counting.snapshot.lookups.count >= before.lookups.count + 3 }
            let after = counting.snapshot
            #expect(after.authorizations == before.authorizations, "no per-inbox token query while the inboxes stay open")
            let passes = after.lookups.dropFirst(before.lookups.count)
            #expect(passes.allSatisfy { Set($0) == Set(ids) }, "\(passes)")
            for reader in readers { reader.cancel() }
        }
    }
}

/// A relay store that counts the token queries it answers.
final class CountingStore: RelayStorage {
    private let store: RelayStore
    private let counts = Mutex<(authorizations: Int, lookups: [[String]])>((0, []))

    init(_ store: RelayStore) { self.store = store }

    var snapshot: (authorizations: Int, lookups: [[String]]) { counts.withLock { $0 } }
    var limits: RelayLimits { store.limits }

    func authorizes(_ token: String, accessory id: String, as role: RelayRole) async throws -> Bool {
        counts.withLock { $0.authorizations += 1 }
        return try store.authorizes(token, accessory: id, as: role)
    }

    func inboxDigests(of ids: [String]) async throws -> [String: [UInt8]] {
        counts.withLock { $0.lookups.append(ids) }
        return try store.inboxDigests(of: ids)
    }

    func register(accessory id: String, inbox: RelayToken, post: RelayToken) async throws { try store.register(accessory: id, inbox: inbox, post: post) }
    func postBatch(_ posts: [(message: [UInt8], accessoryID: String)], now: Date) async throws -> [Result<UInt64, any Error>] { try store.postBatch(posts, now: now) }
    func fetch(for id: String, after: UInt64, limit: Int, now: Date) async throws -> [(seq: UInt64, message: [UInt8])] { try store.fetch(for: id, after: after, limit: limit, now: now) }
    func forget(for id: String, upTo: UInt64) async throws { try store.forget(for: id, upTo: upTo) }
    func sweep(now: Date) async throws -> Int { try store.sweep(now: now) }
    func queue(of id: String) async throws -> RelayAdmission.Queue? { try store.queue(of: id) }
    func setPushTarget(_ target: PushTarget, accessory id: String) async throws { try store.setPushTarget(target, accessory: id) }
    func pushTarget(of id: String) async throws -> PushTarget? { try store.pushTarget(of: id) }
    func elsewhere() -> AsyncStream<RelayElsewhere> { store.elsewhere() }
    func announceInbox(of id: String) {}
}
