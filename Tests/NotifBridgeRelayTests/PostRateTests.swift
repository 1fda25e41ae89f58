import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import Testing

/// The post rate per accessory (docs/PROTOCOL.md §11.4) on the live server: a post token whose
/// accessory acknowledges everything never fills a queue, so the rate is what bounds it.
@Suite("Relay post rate")
struct PostRateTests {
    @Test("the burst is taken, the post past it is refused with Retry-After and not stored; another accessory posts on")
    func burst() async throws {
        let log = CapturedLog()
        try await withRelay(postRate: RateLimit(burst: 2, interval: .seconds(3600)), logger: Logger(label: "relay-test", factory: { _ in log })) { store, client in
            try store.register(accessory: "watch-2", inbox: RelayServerTests.inbox, post: RelayServerTests.post)
            #expect(try await RelayServerTests.post(client, relayMessage(1)).status == .created)
            #expect(try await RelayServerTests.post(client, relayMessage(2)).status == .created)
            let refused = try await RelayServerTests.post(client, relayMessage(3))
            #expect(refused.status == .tooManyRequests)
            // An hour's interval less the time the posts took (RateAllowanceTests has the rounding).
            #expect((3_500...3_600).contains(refused.headers[.retryAfter].flatMap { Int($0) } ?? 0))
            #expect(String(buffer: refused.body).contains("over the accessory's post rate"))
            #expect(try store.queue(of: RelayServerTests.accessory) == .init(messages: 2, bytes: 72))
            #expect(try await RelayServerTests.post(client, relayMessage(4), to: "watch-2").status == .created)
            #expect(log.messages(at: .notice).filter { $0 == "post refused: over the accessory's post rate" }.count == 1)
        }
    }

    @Test("a refused post is counted before its body is read, and a wrong token is not counted at all")
    func countedAfterAuthorization() async throws {
        try await withRelay(postRate: RateLimit(burst: 1, interval: .seconds(3600))) { _, client in
            for _ in 0..<3 {
                let stranger = try await RelayServerTests.post(client, relayMessage(1), token: "nonsense")
                #expect(stranger.status == .unauthorized)
            }
            let first = try await RelayServerTests.post(client, relayMessage(1))
            #expect(first.status == .created, "strangers spent none of the burst")
            let tooLarge = try await RelayServerTests.post(client, relayMessage(7, length: 300 * 1024))
            #expect(tooLarge.status == .tooManyRequests)
        }
    }

    /// Each registration is an fsynced write, and a post token could register without end.
    @Test("push-token registrations share the post rate")
    func registrations() async throws {
        let body = #"{"pushToken":"\#(String(repeating: "ab", count: 32))","bundleID":"com.example.companion"}"#
        try await withRelay(postRate: RateLimit(burst: 2, interval: .seconds(3600))) { _, client in
            let first = try await APNsRelayTests.register(client, token: RelayServerTests.post.text, body: body)
            #expect(first == .noContent)
            #expect(try await RelayServerTests.post(client, relayMessage(1)).status == .created)
            let second = try await APNsRelayTests.register(client, token: RelayServerTests.post.text, body: body)
            #expect(second == .tooManyRequests, "the burst of two is spent")
        }
    }

    @Test("once an interval has passed, the accessory may post again")
    func refills() async throws {
        try await withRelay(postRate: RateLimit(burst: 1, interval: .milliseconds(1))) { _, client in
            let first = try await RelayServerTests.post(client, relayMessage(1))
            #expect(first.status == .created)
            try await Task.sleep(for: .milliseconds(20))
            let again = try await RelayServerTests.post(client, relayMessage(2))
            #expect(again.status == .created, "a burst of one, refilled")
        }
    }

    /// A live relay in a fresh directory whose accessories may post at `postRate`.
    private func withRelay(
        postRate: RateLimit,
        logger: Logger = Logger(label: "relay-test"),
        _ body: @Sendable (RelayStore, any TestClientProtocol) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory("relay-post-rate")
        defer { directory.remove() }
        let configuration = RelayServer.Configuration(port: 0, postRate: postRate)
        try await RelayServerTests.withRelay(at: directory.path + "/relay.sqlite", configuration: configuration, logger: logger, body)
    }
}
