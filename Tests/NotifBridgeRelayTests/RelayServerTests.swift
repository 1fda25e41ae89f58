import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import NotifBridgeWebServing
import Synchronization
import Testing

/// The relay server on a real loopback socket and a real SQLite file: posts over HTTP, the inbox
/// over a WebSocket, as an accessory and a transport extension would use them.
@Suite("Relay server")
struct RelayServerTests {
    static let accessory = "watch-1"
    static let inbox = try! RelayToken(randomBytes: Array(repeating: 0xA1, count: 32))
    static let post = try! RelayToken(randomBytes: Array(repeating: 0xB2, count: 32))

    /// A registered accessory's relay, live on a free port for the duration of `body`.
    static func withRelay<T: Sendable>(
        at path: String,
        limits: RelayLimits = RelayLimits(),
        configuration: RelayServer.Configuration = .init(port: 0),
        pusher: (any APNsPushing)? = nil,
        logger: Logger = Logger(label: "relay-test"),
        _ body: @Sendable (RelayStore, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let store = try RelayStore(path: path, limits: limits)
        try store.register(accessory: accessory, inbox: inbox, post: post)
        // As `relay serve` runs it; the body gets the store itself, to look into it directly.
        let server = RelayServer(store: ServingRelayStore(store), configuration: configuration, pusher: pusher, logger: logger)
        let result = try await server.application().test(.live) { client in try await body(store, client) }
        try store.close()
        return result
    }

    /// A fresh SQLite store in its own directory with the test accessory registered, for as long
    /// as `body` runs.
    static func withRegisteredStore<T>(_ name: String, _ body: (RelayStore) async throws -> T) async throws -> T {
        let directory = try TemporaryDirectory(name)
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite")
        defer { try? store.close() }
        try store.register(accessory: accessory, inbox: inbox, post: post)
        return try await body(store)
    }

    /// A relay over `store` with `limits` (or `configuration`) on a free loopback port: the port,
    /// and the task serving.
    static func serve(_ store: RelayStore, limits: ConnectionLimits) async throws -> (Int, Task<Void, any Error>) {
        try await serve(store, configuration: .init(port: 0, limits: limits))
    }

    static func serve(_ store: RelayStore, configuration: RelayServer.Configuration) async throws -> (Int, Task<Void, any Error>) {
        let server = RelayServer(store: ServingRelayStore(store), configuration: configuration, logger: Logger(label: "relay-test"))
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { listening.yield($0) }).run() }
        var iterator = ports.makeAsyncIterator()
        return (try #require(await iterator.next()), task)
    }

    @Test("Sockets that send nothing hold the connection slots only until the first-bytes timeout; an inbox outlives the idle timeout")
    func connectionLimits() async throws {
        try await RelayServerTests.withRegisteredStore("relay-limits") { store in
            let (port, task) = try await Self.serve(store, limits: ConnectionLimits(maxConnections: 2, firstBytesTimeout: .seconds(1), idleTimeout: .seconds(1)))
            defer { task.cancel() }
            let http = HTTPClient.shared

            // More than the cap plus what one accept batch can take.
            let idle = try (0..<10).map { _ in try LoopbackSocket(port: port) }
            defer { withExtendedLifetime(idle) {} }
            let started = ContinuousClock.now
            let health = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/health"), timeout: .seconds(20))
            #expect(health.status.code == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(900), "served before the idle sockets timed out: the cap did not hold")
            for connection in idle { #expect(try await connection.closedByPeer(within: TestWait.deadline)) }

            // An open inbox is a WebSocket: idle past the HTTP idle timeout, it still delivers.
            let delivered = Mutex(false)
            _ = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/accessories/\(Self.accessory)/inbox",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(Self.inbox.text)"]),
                logger: Logger(label: "inbox-test")
            ) { inbound, outbound, _ in
                try await Task.sleep(for: .seconds(2))
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/accessories/\(Self.accessory)/messages")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(Self.post.text)")
                request.body = .bytes(ByteBuffer(bytes: relayMessage(1)))
                #expect(try await http.execute(request, timeout: .seconds(10)).status.code == 201)
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                let first = try await messages.next()
                try await outbound.close(.normalClosure, reason: nil)
                if case .binary? = first { delivered.withLock { $0 = true } }
            }
            #expect(delivered.withLock { $0 })
        }
    }

    static func post(_ client: some TestClientProtocol, _ body: [UInt8], token: String = post.text, to id: String = accessory) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/accessories/\(id)/messages", method: .post,
            headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(bytes: body)
        )
    }

    /// Opens the inbox, takes `count` frames, sends the acks `acks` returns for them, and closes.
    static func readInbox(
        _ client: some TestClientProtocol, count: Int, token: String = inbox.text,
        during: @escaping @Sendable () async throws -> Void = {},
        acks: @escaping @Sendable ([RelayFrame]) -> [UInt64]
    ) async throws -> [RelayFrame] {
        let port = try #require(client.port)
        let frames = Frames()
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/v1/accessories/\(accessory)/inbox",
            configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: [.authorization: "Bearer \(token)"]),
            logger: Logger(label: "inbox-test")
        ) { inbound, outbound, _ in
            try await during()
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            for _ in 0..<count {
                guard case .binary(let buffer) = try await iterator.next() else { break }
                frames.append(try RelayFrame(decoding: Array(buffer.readableBytesView)))
            }
            for seq in acks(frames.all) {
                try await outbound.write(.binary(ByteBuffer(bytes: RelayFrame.ack(seq: seq).encoded())))
            }
            // The acks are handled before the close that follows them.
            try await outbound.close(.normalClosure, reason: nil)
        }
        return frames.all
    }

    /// A client that trickled a header line at a time held its slot for ever: the first-bytes
    /// deadline ended at the first byte, and the idle timeout restarts at every byte. Now the
    /// first request's head must be whole within the first-bytes timeout of the connection,
    /// and each later one within the idle timeout of the request before it; a trickle of
    /// lines every 200 ms does not stop either.
    @Test("a request head trickled a line at a time is cut off: the first after the first-bytes timeout, a later one after the idle timeout", arguments: [false, true])
    func trickledHeads(afterARequest: Bool) async throws {
        let directory = try TemporaryDirectory("relay-trickle")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite")
        defer { try? store.close() }
        let (port, task) = try await Self.serve(store, limits: ConnectionLimits(maxConnections: 4, firstBytesTimeout: .seconds(1), idleTimeout: .seconds(2)))
        defer { task.cancel() }

        let socket = try LoopbackSocket(port: port)
        if afterARequest {
            socket.send(Array("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        }
        let started = ContinuousClock.now
        let trickle = Task {
            socket.send(Array("GET /v1/health HTTP/1.1\r\n".utf8))
            while !Task.isCancelled {
                socket.send(Array("X-Slow: 1\r\n".utf8))
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { trickle.cancel() }
        #expect(try await socket.closedByPeer(within: .seconds(10)), "still open after 10 s of trickled headers")
        let held = ContinuousClock.now - started
        #expect(held >= (afterARequest ? .milliseconds(1900) : .milliseconds(900)), "\(held)")
    }

    /// A post refused (401 here, a 413 alike) is answered before its body has come, and the
    /// server then reads the rest of the body to throw it away; each byte restarted the idle
    /// timeout, so a client with no token held its connection for as long as it trickled one.
    @Test("a request body trickled a byte at a time is cut off at the request timeout, answered or not", arguments: [false, true])
    func trickledBody(authorized: Bool) async throws {
        try await RelayServerTests.withRegisteredStore("relay-trickle-body") { store in
            let (port, task) = try await Self.serve(store, limits: ConnectionLimits(maxConnections: 4, idleTimeout: .seconds(5), requestTimeout: .seconds(1)))
            defer { task.cancel() }

            let socket = try LoopbackSocket(port: port)
            let token = authorized ? "Authorization: Bearer \(Self.post.text)\r\n" : ""
            socket.send(Array("POST /v1/accessories/\(Self.accessory)/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n\(token)Content-Length: 1000\r\n\r\n".utf8))
            let started = ContinuousClock.now
            let trickle = Task {
                while !Task.isCancelled {
                    socket.send([0x41])
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            defer { trickle.cancel() }
            #expect(try await socket.closedByPeer(within: .seconds(10)), "still open after 10 s of a trickled body")
            let held = ContinuousClock.now - started
            #expect(held >= .milliseconds(900), "\(held)")
            #expect(try store.queue(of: Self.accessory)?.messages == 0)
        }
    }

    /// They got 404, as if the path did not exist.
    @Test("a known path asked with another method: 405 and the method it takes", arguments: [
        ("/v1/health", HTTPRequest.Method.post, "GET"),
        ("/v1/accessories/watch-1/messages", .get, "POST"),
        ("/v1/accessories/watch-1/messages", .put, "POST"),
        ("/v1/accessories/watch-1/push-token", .post, "PUT"),
        ("/v1/accessories/watch-1/inbox", .delete, "GET"),
    ])
    func otherMethods(path: String, method: HTTPRequest.Method, allowed: String) async throws {
        let directory = try TemporaryDirectory("relay-methods")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite", limits: RelayLimits()) { _, client in
            let response = try await client.execute(uri: path, method: method, headers: [.authorization: "Bearer \(Self.post.text)"])
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == allowed)
            #expect(try await client.execute(uri: "/v1/nothing-here", method: method).status == .notFound)
        }
    }

    @Test("posts: the token of the right accessory and role, a message of 36 to maxMessageLength bytes, room in the queue")
    func postRules() async throws {
        let directory = try TemporaryDirectory("relay-post")
        defer { directory.remove() }
        let limits = RelayLimits(maxMessageLength: 100, maxQueuedMessages: 2)
        try await Self.withRelay(at: directory.path + "/relay.sqlite", limits: limits) { store, client in
            let refusedAuth = try await [
                Self.post(client, relayMessage(1), token: "nonsense"),
                Self.post(client, relayMessage(1), token: Self.inbox.text),
                Self.post(client, relayMessage(1), to: "no-such-accessory"),
                client.execute(uri: "/v1/accessories/\(Self.accessory)/messages", method: .post, body: ByteBuffer(bytes: relayMessage(1))),
            ].map(\.status)
            #expect(refusedAuth == Array(repeating: .unauthorized, count: 4))
            let challenge = try await Self.post(client, relayMessage(1), token: "nonsense").headers[.wwwAuthenticate]
            #expect(challenge == #"Bearer realm="notifbridge-relay""#)
            #expect(try await Self.post(client, []).status == .badRequest)
            let short = try await Self.post(client, relayMessage(7, length: RelayLimits.minMessageLength - 1))
            #expect(short.status == .badRequest)
            #expect(String(buffer: short.body).contains("a message of 35 bytes is shorter than the 36"), "\(String(buffer: short.body))")
            #expect(try await Self.post(client, relayMessage(7, length: 101)).status == .contentTooLarge)
            let accepted = try await Self.post(client, relayMessage(7, length: 100))
            #expect(accepted.status == .created)
            #expect(String(buffer: accepted.body) == #"{"seq":1}"#)
            #expect(try await Self.post(client, relayMessage(2)).status == .created)
            let full = try await Self.post(client, relayMessage(3))
            #expect(full.status == .tooManyRequests)
            #expect(String(buffer: full.body).contains("2 messages already wait"))
            #expect(try store.queue(of: Self.accessory) == .init(messages: 2, bytes: 136))
        }
    }

    /// Whoever holds a post token can be refused any number of times; the log gets `logBurst`
    /// lines per accessory and window, then one line counting the rest.
    @Test("refused posts: logBurst lines, then one summary; another accessory has its own share", arguments: [(burst: 3, refused: 3), (burst: 3, refused: 4)])
    func refusalsRationed(burst: Int, refused: Int) async throws {
        let directory = try TemporaryDirectory("relay-log")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite", limits: RelayLimits(maxQueuedMessages: 1))
        defer { try? store.close() }
        try store.register(accessory: Self.accessory, inbox: Self.inbox, post: Self.post)
        try store.register(accessory: "watch-2", inbox: Self.inbox, post: Self.post)
        let log = CapturedLog()
        // Long enough that the posts all fall in one window on a loaded machine.
        let interval = Duration.seconds(3)
        let server = RelayServer(
            store: store, configuration: .init(port: 0, logBurst: burst, logInterval: interval),
            logger: Logger(label: "relay-test", factory: { _ in log })
        )
        try await server.application().test(.live) { client in
            #expect(try await Self.post(client, relayMessage(1)).status == .created)
            #expect(try await Self.post(client, relayMessage(1), to: "watch-2").status == .created)
            for _ in 0..<refused { #expect(try await Self.post(client, relayMessage(2)).status == .tooManyRequests) }
            #expect(try await Self.post(client, relayMessage(2), to: "watch-2").status == .tooManyRequests)
            let refusals = log.messages(at: .notice).filter { $0 == "post refused" }
            #expect(refusals.count == min(refused, burst) + 1, "watch-1's share, and watch-2's own line")
            try await Task.sleep(for: interval + .seconds(1))
        }
        let summaries = log.messages(at: .notice).filter { $0.contains("were not logged") }
        #expect(summaries == (refused > burst ? ["\(refused - burst) more refusals from \(Self.accessory) in the last \(interval) were not logged"] : []))
    }

    /// HTTP's scheme names ignore case; a body over its limit is refused saying so (Hummingbird's
    /// own 413 had no body), at the limit it is read.
    @Test("the bearer scheme in any case; a push-token body one past its limit is refused with a reason")
    func bearerCaseAndBodyLimit() async throws {
        let directory = try TemporaryDirectory("relay-bearer")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite") { _, client in
            for scheme in ["bearer", "BEARER", "Bearer"] {
                let response = try await client.execute(
                    uri: "/v1/accessories/\(Self.accessory)/messages", method: .post,
                    headers: [.authorization: "\(scheme) \(Self.post.text)"], body: ByteBuffer(bytes: relayMessage(1))
                )
                #expect(response.status == .created, "\(scheme)")
            }
            let pushToken = "/v1/accessories/\(Self.accessory)/push-token"
            for (length, status) in [(RelayServer.maxPushTargetBody, HTTPResponse.Status.badRequest), (RelayServer.maxPushTargetBody + 1, .contentTooLarge)] {
                let response = try await client.execute(
                    uri: pushToken, method: .put, headers: [.authorization: "Bearer \(Self.post.text)", .contentType: "application/json"],
                    body: ByteBuffer(string: String(repeating: " ", count: length))
                )
                #expect(response.status == status, "\(length) bytes")
                if status == .contentTooLarge {
                    #expect(String(buffer: response.body).contains("a push-token registration is over the limit of 1024 bytes"), "\(String(buffer: response.body))")
                }
            }
        }
    }

    @Test("posts at once share transactions: each gets its own number or its own refusal, the queue exactly at its limit")
    func concurrentPosts() async throws {
        let directory = try TemporaryDirectory("relay-concurrent")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite", limits: RelayLimits(maxQueuedMessages: 40)) { store, client in
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<41 { group.addTask { try await Self.post(client, relayMessage(UInt8(index))) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = responses.filter { $0.status == .created }.map { String(buffer: $0.body) }
            #expect(Set(created) == Set((1...40).map { #"{"seq":\#($0)}"# }))
            #expect(responses.filter { $0.status == .tooManyRequests }.count == 1)
            #expect(try store.queue(of: Self.accessory) == .init(messages: 40, bytes: 40 * 36))
        }
    }

    @Test("the inbox delivers in order, live posts too; an ack forgets; what is not acked comes first next time")
    func inboxDeliversAndForgets() async throws {
        let directory = try TemporaryDirectory("relay-inbox")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite") { store, client in
            for byte: UInt8 in 1...3 { _ = try await Self.post(client, relayMessage(byte)) }
            // Message 4 is posted while the inbox is open: the post wakes the connection.
            let first = try await Self.readInbox(client, count: 4, during: { _ = try await Self.post(client, relayMessage(4)) }) { _ in [2] }
            #expect(first == (1...4).map { RelayFrame.deliver(seq: $0, message: relayMessage(UInt8($0))) })
            #expect(try store.queue(of: Self.accessory) == .init(messages: 2, bytes: 72))

            let second = try await Self.readInbox(client, count: 2) { frames in [frames.last!.seq] }
            #expect(second.map(\.seq) == [3, 4])
            #expect(try store.queue(of: Self.accessory) == .init(messages: 0, bytes: 0))
        }
    }

    @Test("the inbox needs the accessory's inbox token; a plain GET is told to upgrade")
    func inboxAuthorization() async throws {
        let directory = try TemporaryDirectory("relay-inbox-auth")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite") { _, client in
            await #expect(throws: (any Error).self) {
                _ = try await Self.readInbox(client, count: 1, token: Self.post.text) { _ in [] }
            }
            let plain = try await client.execute(uri: "/v1/accessories/\(Self.accessory)/inbox", method: .get, headers: [.authorization: "Bearer \(Self.inbox.text)"])
            #expect(plain.status == .badRequest)
            let wrong = try await client.execute(uri: "/v1/accessories/\(Self.accessory)/inbox", method: .get, headers: [.authorization: "Bearer \(Self.post.text)"])
            #expect(wrong.status == .unauthorized)
        }
    }

    enum Bad: Sendable, CustomStringConvertible {
        case binary([UInt8]), text(String)
        var description: String {
            switch self {
            case .binary(let bytes): "\(bytes.count) bytes starting \(bytes.prefix(1))"
            case .text: "text"
            }
        }
    }

    @Test("an accessory that sends anything but acks of what it was sent is disconnected, and its queue stays", arguments: [
        (Bad.binary(RelayFrame.ack(seq: 5).encoded()), WebSocketErrorCode.policyViolation),
        (.binary(RelayFrame.ack(seq: 1).encoded() + [0]), .policyViolation),
        (.binary(RelayFrame.deliver(seq: 1, message: [1]).encoded()), .policyViolation),
        (.binary(Array(repeating: 2, count: 64)), .policyViolation),
        (.binary(Array(repeating: 2, count: 65)), .policyViolation),
        (.text("ack 1"), .policyViolation),
    ])
    func badFrame(_ bad: Bad, _ expected: WebSocketErrorCode) async throws {
        let directory = try TemporaryDirectory("relay-bad-frame")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite") { store, client in
            _ = try await Self.post(client, relayMessage(9))
            let port = try #require(client.port)
            let close = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/accessories/\(Self.accessory)/inbox",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(Self.inbox.text)"]),
                logger: Logger(label: "inbox-test")
            ) { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                _ = try await iterator.next()
                switch bad {
                case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                case .text(let text): try await outbound.write(.text(text))
                }
                while try await iterator.next() != nil {}
            }
            #expect(close?.closeCode == expected)
            #expect(try store.queue(of: Self.accessory)?.messages == 1)
        }
    }

    @Test("what the relay accepted survives a restart and reaches the accessory afterwards")
    func restart() async throws {
        let directory = try TemporaryDirectory("relay-restart")
        defer { directory.remove() }
        let path = directory.path + "/relay.sqlite"
        try await Self.withRelay(at: path) { _, client in
            for byte: UInt8 in 1...2 {
                let status = try await Self.post(client, relayMessage(byte)).status
                #expect(status == .created)
            }
        }
        try await Self.withRelay(at: path) { store, client in
            let frames = try await Self.readInbox(client, count: 2) { _ in [2] }
            #expect(frames == [.deliver(seq: 1, message: relayMessage(1)), .deliver(seq: 2, message: relayMessage(2))])
            #expect(try await Self.post(client, relayMessage(3)).body == ByteBuffer(string: #"{"seq":3}"#))
            #expect(try store.queue(of: Self.accessory)?.messages == 1)
        }
    }

    /// An inbox that reads until the relay closes it (the task's value is the close frame);
    /// `delivered` yields once per frame.
    static func openInbox(
        _ client: some TestClientProtocol, accessory: String = accessory, token: String = inbox.text
    ) throws -> (Task<WebSocketCloseFrame?, any Error>, AsyncStream<Void>) {
        let port = try #require(client.port)
        let (delivered, deliveredContinuation) = AsyncStream<Void>.makeStream()
        let reader = Task {
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/accessories/\(accessory)/inbox",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]),
                logger: Logger(label: "inbox-test")
            ) { inbound, _, _ in
                for try await _ in inbound.messages(maxSize: 1 << 20) { deliveredContinuation.yield() }
            }
        }
        return (reader, delivered)
    }

    @Test("the relay stops with an inbox open: the accessory hears a close")
    func stopWithAnOpenInbox() async throws {
        let directory = try TemporaryDirectory("relay-stop")
        defer { directory.remove() }
        let reader = try await Self.withRelay(at: directory.path + "/relay.sqlite") { _, client in
            _ = try await Self.post(client, relayMessage(1))
            let (reader, delivered) = try Self.openInbox(client)
            // Open and delivering: the relay now stops with the inbox open.
            for await _ in delivered { break }
            return reader
        }
        let close = try await reader.value
        #expect(close?.closeCode == WebSocketErrorCode.normalClosure)
    }

    @Test("registering an accessory again ends the inbox opened with its old token; the new token opens it, and the queue stays")
    func reRegisterRevokesTheOpenInbox() async throws {
        let directory = try TemporaryDirectory("relay-reregister")
        defer { directory.remove() }
        let configuration = RelayServer.Configuration(port: 0, tokenCheckInterval: .milliseconds(100))
        try await Self.withRelay(at: directory.path + "/relay.sqlite", configuration: configuration) { store, client in
            _ = try await Self.post(client, relayMessage(1))
            let (older, delivered) = try Self.openInbox(client)
            for await _ in delivered { break }
            // Still open across several checks while the token stands.
            try await Task.sleep(for: .milliseconds(350))
            let newInbox = try RelayToken(randomBytes: Array(repeating: 0xC3, count: 32))
            try store.register(accessory: Self.accessory, inbox: newInbox, post: Self.post)
            let close = try await older.value
            #expect(close?.closeCode == WebSocketErrorCode.policyViolation)
            // The accessory learns why, not only a code.
            #expect(close?.reason == "the inbox token was replaced (relay register); connect with the new one")
            await #expect(throws: (any Error).self) {
                _ = try await Self.readInbox(client, count: 1) { _ in [] }
            }
            let frames = try await Self.readInbox(client, count: 1, token: newInbox.text) { _ in [1] }
            #expect(frames == [.deliver(seq: 1, message: relayMessage(1))])
        }
    }

    /// The time limit turns a wrongly closed second inbox (its delivery stream then never yields
    /// again) into a failure rather than a hang.
    @Test("the token check covers every open inbox in one pass, and ends only the inbox whose token was replaced", .timeLimit(.minutes(1)))
    func reRegisterEndsOnlyThatInbox() async throws {
        let directory = try TemporaryDirectory("relay-reregister-one")
        defer { directory.remove() }
        let configuration = RelayServer.Configuration(port: 0, tokenCheckInterval: .milliseconds(100))
        let otherInbox = try RelayToken(randomBytes: Array(repeating: 0xD4, count: 32))
        let otherPost = try RelayToken(randomBytes: Array(repeating: 0xE5, count: 32))
        try await Self.withRelay(at: directory.path + "/relay.sqlite", configuration: configuration) { store, client in
            try store.register(accessory: "watch-2", inbox: otherInbox, post: otherPost)
            _ = try await Self.post(client, relayMessage(1))
            _ = try await Self.post(client, relayMessage(2), token: otherPost.text, to: "watch-2")
            let (first, firstDelivered) = try Self.openInbox(client)
            let (second, secondDelivered) = try Self.openInbox(client, accessory: "watch-2", token: otherInbox.text)
            var secondFrames = secondDelivered.makeAsyncIterator()
            for await _ in firstDelivered { break }
            _ = await secondFrames.next()
            try store.register(accessory: Self.accessory, inbox: try RelayToken(randomBytes: Array(repeating: 0xC3, count: 32)), post: Self.post)
            #expect(try await first.value?.closeCode == WebSocketErrorCode.policyViolation)
            // Several passes later the other inbox is still open: a new post reaches it.
            try await Task.sleep(for: .milliseconds(350))
            _ = try await Self.post(client, relayMessage(3), token: otherPost.text, to: "watch-2")
            #expect(await secondFrames.next() != nil)
            second.cancel()
        }
    }

    @Test("a newer inbox connection of the accessory ends the older one, and gets what it had not acked")
    func newerConnectionTakesOver() async throws {
        let directory = try TemporaryDirectory("relay-takeover")
        defer { directory.remove() }
        try await Self.withRelay(at: directory.path + "/relay.sqlite") { store, client in
            _ = try await Self.post(client, relayMessage(1))
            let (older, delivered) = try Self.openInbox(client)
            for await _ in delivered { break }
            let frames = try await Self.readInbox(client, count: 1) { _ in [1] }
            #expect(frames == [.deliver(seq: 1, message: relayMessage(1))])
            let close = try await older.value
            #expect(close?.closeCode == WebSocketErrorCode.goingAway)
            #expect(try store.queue(of: Self.accessory)?.messages == 0)
        }
    }
}

/// Frames collected by a WebSocket handler.
final class Frames: Sendable {
    private let frames = Mutex<[RelayFrame]>([])
    func append(_ frame: RelayFrame) { frames.withLock { $0.append(frame) } }
    var all: [RelayFrame] { frames.withLock { $0 } }
}

extension RelayFrame {
    var seq: UInt64 {
        switch self {
        case .deliver(let seq, _), .ack(let seq), .push(let seq, _), .pushed(let seq, _): seq
        }
    }
}
