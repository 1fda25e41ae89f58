import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// The accessory's inbox client against the real relay server on a loopback socket.
@Suite("Relay inbox client")
struct RelayInboxClientTests {
    static let accessory = "watch-1"
    static let inbox = try! RelayToken(randomBytes: Array(repeating: 0x5A, count: 32))
    static let post = try! RelayToken(randomBytes: Array(repeating: 0x6B, count: 32))

    /// What the client's `receive` saw, and when the test may go on.
    final class Received: Sendable {
        let log = Mutex<[UInt64]>([])
        let events = Mutex<[RelayInboxClient.Event]>([])
        let stream: AsyncStream<UInt64>
        let continuation: AsyncStream<UInt64>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }

        /// Waits until `receive` has been called for `seq` (the stream keeps every call, so
        /// consecutive waits see each once).
        func wait(for seq: UInt64) async {
            for await next in stream where next == seq { return }
        }
    }

    static func withRelay(_ body: @Sendable (RelayStore, any TestClientProtocol, String) async throws -> Void) async throws {
        let directory = try TemporaryDirectory("relay-client")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite")
        try store.register(accessory: accessory, inbox: inbox, post: post)
        let server = RelayServer(store: store, configuration: .init(port: 0), logger: Logger(label: "relay-test"))
        try await server.application().test(.live) { client in
            try await body(store, client, "ws://127.0.0.1:\(try #require(client.port))")
        }
        try store.close()
    }

    static func post(_ client: some TestClientProtocol, _ body: [UInt8]) async throws {
        let response = try await client.execute(
            uri: "/v1/accessories/\(accessory)/messages", method: .post,
            headers: [.authorization: "Bearer \(post.text)"], body: ByteBuffer(bytes: body)
        )
        #expect(response.status == .created)
    }

    /// Waits, within a bound, for the relay to have forgotten everything (the last ack handled).
    static func drained(_ store: RelayStore) async throws -> Bool {
        for _ in 0..<200 {
            if try store.queue(of: accessory)?.messages == 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Runs a client of the inbox at `url` that checks each message and records it.
    static func receive(
        from url: String, check: @escaping @Sendable (UInt64, [UInt8]) -> Void
    ) -> (Received, Task<Void, Never>) {
        let received = Received()
        let inboxClient = RelayInboxClient(
            configuration: .init(relay: url, accessoryID: Self.accessory, token: Self.inbox.text),
            logger: Logger(label: "inbox-client")
        )
        let running = Task {
            await inboxClient.run { seq, message in
                check(seq, message)
                received.log.withLock { $0.append(seq) }
                received.continuation.yield(seq)
            }
        }
        return (received, running)
    }

    @Test("messages reach receive in order, live ones too, and each is acked once receive returns")
    func receivesAndAcks() async throws {
        try await Self.withRelay { store, client, url in
            for byte: UInt8 in 1...3 { try await Self.post(client, relayMessage(byte)) }
            let (received, running) = Self.receive(from: url) { seq, message in #expect(message == relayMessage(UInt8(seq))) }
            await received.wait(for: 3)
            try await Self.post(client, relayMessage(4))
            await received.wait(for: 4)
            #expect(try await Self.drained(store))
            running.cancel()
            await running.value
            #expect(received.log.withLock { $0 } == [1, 2, 3, 4])
        }
    }

    /// The relay sends long messages in 16 KiB fragments (§11.5): one byte either side of a
    /// frame's length, and the largest message, arrive whole and in order, and so does the short
    /// one behind them. A message one frame long plus one byte blocked the inbox for good before.
    @Test("long messages arrive whole, in order, the one behind them too", .timeLimit(.minutes(1)))
    func longMessages() async throws {
        let lengths = [16_375, 16_376, 16_384 - 9, 16_384 - 8, RelayLimits().maxMessageLength, RelayLimits.minMessageLength]
        try await Self.withRelay { store, client, url in
            for (index, length) in lengths.enumerated() {
                try await Self.post(client, relayMessage(UInt8(index + 1), length: length))
            }
            let (received, running) = Self.receive(from: url) { seq, message in
                #expect(message == relayMessage(UInt8(seq), length: lengths[Int(seq) - 1]), "message \(seq): \(message.count) bytes")
            }
            await received.wait(for: UInt64(lengths.count))
            #expect(try await Self.drained(store))
            running.cancel()
            await running.value
            #expect(received.log.withLock { $0 } == Array(1...UInt64(lengths.count)))
        }
    }

    @Test("when receive fails, nothing is acked and the message comes again on the next connection")
    func failureRedelivers() async throws {
        try await Self.withRelay { store, client, url in
            for byte: UInt8 in 1...3 { try await Self.post(client, relayMessage(byte)) }
            let received = Received()
            let failedOnce = Mutex(false)
            let inboxClient = RelayInboxClient(
                configuration: .init(relay: url, accessoryID: Self.accessory, token: Self.inbox.text, minRetryDelay: .milliseconds(20)),
                logger: Logger(label: "inbox-client")
            )
            let running = Task {
                await inboxClient.run(onEvent: { event in received.events.withLock { $0.append(event) } }) { seq, _ in
                    received.log.withLock { $0.append(seq) }
                    received.continuation.yield(seq)
                    if seq == 2, failedOnce.withLock({ done in defer { done = true }; return !done }) {
                        throw CancellationError()
                    }
                }
            }
            await received.wait(for: 3)
            #expect(try await Self.drained(store))
            running.cancel()
            await running.value
            #expect(received.log.withLock { $0 } == [1, 2, 2, 3])
            let events = received.events.withLock { $0 }
            #expect(events.first == .connected && events.filter { $0 == .connected }.count == 2)
        }
    }

    /// After `relay register` replaced the token, the accessory kept offering the old one until
    /// it was restarted.
    @Test("the token is read again before each attempt: once the file holds the right one, the inbox opens", .timeLimit(.minutes(1)))
    func tokenReadAgain() async throws {
        try await Self.withRelay { _, client, url in
            try await Self.post(client, relayMessage(1))
            let current = Mutex(Self.post.text)
            let reasons = Mutex<[String]>([])
            let (disconnects, continuation) = AsyncStream<Void>.makeStream()
            let received = Received()
            let inboxClient = RelayInboxClient(
                configuration: .init(
                    relay: url, accessoryID: Self.accessory, token: "not read yet", readToken: { current.withLock { $0 } },
                    minRetryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(40)),
                logger: Logger(label: "inbox-client")
            )
            let running = Task {
                await inboxClient.run(onEvent: { event in
                    if case .disconnected(let reason, _) = event {
                        reasons.withLock { $0.append(reason) }
                        continuation.yield()
                    }
                }) { seq, _ in received.continuation.yield(seq) }
            }
            var count = 0
            for await _ in disconnects {
                count += 1
                if count == 2 { break }
            }
            current.withLock { $0 = Self.inbox.text }
            await received.wait(for: 1)
            running.cancel()
            await running.value
            let refusal = try #require(reasons.withLock { $0.first })
            #expect(refusal.hasSuffix("and put its new inbox token in the file, which is read again before each attempt"), "\(refusal)")
        }
    }

    @Test("a wrong token: the client keeps trying, with growing delays, and receives nothing")
    func wrongToken() async throws {
        try await Self.withRelay { _, client, url in
            try await Self.post(client, relayMessage(1))
            let events = Mutex<[RelayInboxClient.Event]>([])
            let (disconnects, continuation) = AsyncStream<Void>.makeStream()
            let inboxClient = RelayInboxClient(
                configuration: .init(
                    relay: url, accessoryID: Self.accessory, token: Self.post.text, minRetryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(40),
                    jitter: { 0 }
                ),
                logger: Logger(label: "inbox-client")
            )
            let running = Task {
                await inboxClient.run(onEvent: { event in
                    events.withLock { $0.append(event) }
                    continuation.yield()
                }) { _, _ in Issue.record("received with a wrong token") }
            }
            var count = 0
            for await _ in disconnects {
                count += 1
                if count == 4 { break }
            }
            running.cancel()
            await running.value
            let delays = events.withLock { $0 }.compactMap { event -> Duration? in
                if case .disconnected(_, let delay) = event { return delay }
                return nil
            }
            // Each the least of its range: half the delay.
            #expect(Array(delays.prefix(4)) == [.milliseconds(5), .milliseconds(10), .milliseconds(20), .milliseconds(20)])
            // Each says why, as the relay told a plain request: not only "upgrade failed".
            let reasons = events.withLock { $0 }.compactMap { event -> String? in
                if case .disconnected(let reason, _) = event { return reason }
                return nil
            }
            #expect(reasons.allSatisfy { $0.contains("refused accessory \(Self.accessory)'s inbox token (401)") }, "\(reasons)")
        }
    }

    /// The delay grew only back to the start after a connection that delivered something: an
    /// idle accessory's delay doubled with every relay restart, up to a minute behind.
    @Test("after failures, a connection that stayed open through a ping interval starts the delays over")
    func stableConnectionResetsDelay() async throws {
        try await Self.withRelay { _, _, url in
            let token = Mutex(Self.post.text)
            let events = Mutex<[RelayInboxClient.Event]>([])
            let (connected, connects) = AsyncStream<Void>.makeStream()
            let (disconnected, disconnects) = AsyncStream<Void>.makeStream()
            let inboxClient = RelayInboxClient(
                configuration: .init(
                    relay: url, accessoryID: Self.accessory, token: Self.post.text, readToken: { token.withLock { $0 } },
                    minRetryDelay: .milliseconds(50), maxRetryDelay: .seconds(2), pingInterval: .milliseconds(300), jitter: { 1 }
                ),
                logger: Logger(label: "inbox-client")
            )
            let running = Task {
                await inboxClient.run(onEvent: { event in
                    events.withLock { $0.append(event) }
                    switch event {
                    case .connected: connects.yield()
                    case .disconnected: disconnects.yield()
                    default: break
                    }
                }) { _, _ in }
            }
            // Two refusals (the post token is not the inbox's): the delay grows to 100 ms, then 200 ms.
            var refusals = disconnected.makeAsyncIterator()
            _ = await refusals.next()
            _ = await refusals.next()
            token.withLock { $0 = Self.inbox.text }
            var opens = connected.makeAsyncIterator()
            _ = await opens.next()
            try await Task.sleep(for: .milliseconds(450))
            // A newer connection of this accessory takes the inbox over: the relay closes this one.
            _ = try await WebSocketClient.connect(
                url: "\(url)/v1/accessories/\(Self.accessory)/inbox",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(Self.inbox.text)"]), logger: Logger(label: "other")
            ) { _, _, _ in
                // Held until the client has been closed and said with what delay it will retry.
                while events.withLock({ $0.filter { if case .disconnected = $0 { true } else { false } }.count }) < 3 {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            running.cancel()
            await running.value
            let delays = events.withLock { $0 }.compactMap { event -> Duration? in
                if case .disconnected(_, let delay) = event { return delay }
                return nil
            }
            #expect(Array(delays.prefix(3)) == [.milliseconds(50), .milliseconds(100), .milliseconds(50)], "\(delays)")
        }
    }
}
