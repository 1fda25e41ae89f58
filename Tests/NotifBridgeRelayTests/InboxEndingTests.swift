import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import NotifBridgeLogGate
@testable import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import NotifBridgeWebServing
import Synchronization
import Testing

/// How the relay ends an inbox: the connection is gone soon after the relay's close, whether
/// or not the accessory answers it, and an overlong message is refused as §11.5 says.
@Suite("Relay inbox endings", .timeLimit(.minutes(1)))
struct InboxEndingTests {
    /// After its close the relay read on, waiting for the accessory's answering close, so a
    /// client that never answered held its connection (one of a relay's `maxConnections`) until
    /// the WebSocket ping timed it out, a minute later; a few such clients locked every
    /// accessory out. Here the relay has one connection to give, and the inbox holding it has
    /// its token replaced: the relay closes it, waits the close timeout for an answer, and the
    /// next request is served.
    @Test("an inbox that never answers the relay's close gives its connection back")
    func unansweredClose() async throws {
        try await RelayServerTests.withRegisteredStore("relay-unanswered-close") { store in
            _ = try store.post(relayMessage(1), to: RelayServerTests.accessory, now: Date())
            let (port, task) = try await RelayServerTests.serve(
                store, configuration: .init(port: 0, limits: ConnectionLimits(maxConnections: 1, closeTimeout: .seconds(1)), tokenCheckInterval: .milliseconds(100))
            )
            defer { task.cancel() }

            // An inbox opened by hand, which reads nothing after its first message and answers
            // nothing.
            let deaf = try Self.openByHand(port)
            let first = try await deaf.read(within: TestWait.deadline) { $0.contains(relayMessage(1)) }
            #expect(first.contains(relayMessage(1)), "the deaf inbox got its message")
            try store.register(accessory: RelayServerTests.accessory, inbox: try RelayToken(randomBytes: Array(repeating: 0xC3, count: 32)), post: RelayServerTests.post)
            let replaced = ContinuousClock.now
            let health = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/health"), timeout: .seconds(15))
            #expect(health.status.code == 200)
            // The accessory had the close timeout to answer.
            #expect(ContinuousClock.now - replaced >= .milliseconds(900))
            withExtendedLifetime(deaf) {}
        }
    }

    /// NIO holds an upgrade it accepted until the request's body has ended, with no time limit:
    /// an inbox token could hold every connection with upgrades that announced a body and sent
    /// none. Such an upgrade is now refused, and cut off like any request whose body does not
    /// come.
    @Test("an inbox upgrade that announces a body and sends none is not upgraded, and gives its connection back")
    func upgradeWithABody() async throws {
        try await RelayServerTests.withRegisteredStore("relay-upgrade-body") { store in
            let (port, task) = try await RelayServerTests.serve(store, limits: ConnectionLimits(maxConnections: 1, requestTimeout: .seconds(1)))
            defer { task.cancel() }
            let socket = try Self.openByHand(port, extraHeaders: "Content-Length: 1\r\n")
            let health = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/health"), timeout: .seconds(15))
            #expect(health.status.code == 200)
            withExtendedLifetime(socket) {}
        }
    }

    /// On a graceful stop swift-websocket sent the close itself, and the inbox read on for the
    /// answer without a limit: an accessory that never answered held the relay's stop open.
    @Test("a relay stopping gracefully with an inbox that never answers its close stops after the close timeout")
    func stopWithUnansweredClose() async throws {
        let directory = try TemporaryDirectory("relay-stop-unanswered")
        defer { directory.remove() }
        let stopped = Mutex(false)
        let relay = Task {
            try await RelayServerTests.withRelay(
                at: directory.path + "/relay.sqlite", configuration: .init(port: 0, limits: ConnectionLimits(maxConnections: 4, closeTimeout: .seconds(1)))
            ) { store, client in
                _ = try store.post(relayMessage(1), to: RelayServerTests.accessory, now: Date())
                let deaf = try Self.openByHand(try #require(client.port))
                let first = try await deaf.read(within: TestWait.deadline) { $0.contains(relayMessage(1)) }
                #expect(first.contains(relayMessage(1)), "the deaf inbox got its message")
                // Returning stops the relay gracefully, with the deaf inbox open.
                return deaf
            }
        }
        let started = ContinuousClock.now
        Task {
            _ = await relay.result
            stopped.withLock { $0 = true }
        }
        try await TestWait.until("the relay to stop") { stopped.withLock { $0 } }
        _ = try await relay.value
        #expect(ContinuousClock.now - started >= .milliseconds(900), "the accessory had the close timeout to answer")
    }

    /// An inbox that stopped reading held its connection for ever: the relay's writes, its
    /// pings and its close all waited on it. Here 64 messages of the largest size are more than
    /// the sockets' buffers hold, and the relay has one connection to give.
    @Test("an inbox that stops reading gives its connection back after the stalled-reader timeout")
    func stalledReader() async throws {
        try await RelayServerTests.withRegisteredStore("relay-stalled-reader") { store in
            for mark in 1...UInt8(64) {
                _ = try store.post(relayMessage(mark, length: store.limits.maxMessageLength), to: RelayServerTests.accessory, now: Date())
            }
            let (port, task) = try await RelayServerTests.serve(
                store, limits: ConnectionLimits(maxConnections: 1, stalledReaderTimeout: .seconds(1))
            )
            defer { task.cancel() }
            let deaf = try Self.openByHand(port)
            let first = try await deaf.read(within: TestWait.deadline) { $0.count > 1 << 16 }
            #expect(first.count > 1 << 16, "the inbox is sending")
            let health = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/health"), timeout: .seconds(20))
            #expect(health.status.code == 200)
            withExtendedLifetime(deaf) {}
        }
    }

    /// The accessory's inbox, opened on a plain socket that reads only when told to.
    static func openByHand(_ port: Int, extraHeaders: String = "") throws -> LoopbackSocket {
        let socket = try LoopbackSocket(port: port)
        socket.send(Array((
            "GET /v1/accessories/\(RelayServerTests.accessory)/inbox HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(RelayServerTests.inbox.text)\r\n"
                + extraHeaders + "\r\n"
        ).utf8))
        return socket
    }

    /// swift-websocket's own reader ended an overlong message in fragments with an error the
    /// inbox swallowed, and the connection closed normally (1000).
    @Test("a message in fragments past the limit is refused with 1008 and a reason; one at the limit is read", arguments: [
        (RelayFrame.headerLength + RelayFrame.maxPushBodyLength, false),
        (RelayFrame.headerLength + RelayFrame.maxPushBodyLength + 1, true),
    ])
    func fragmentedMessage(length: Int, refused: Bool) async throws {
        let directory = try TemporaryDirectory("relay-fragments")
        defer { directory.remove() }
        try await RelayServerTests.withRelay(at: directory.path + "/relay.sqlite") { _, client in
            let port = try #require(client.port)
            let close = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/accessories/\(RelayServerTests.accessory)/inbox",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(RelayServerTests.inbox.text)"]),
                logger: Logger(label: "inbox-test")
            ) { inbound, outbound, _ in
                // A push frame's header, then a body that is not a push body, in two fragments.
                let bytes = RelayFrame.push(id: 1, body: [UInt8](repeating: 0x7B, count: length - RelayFrame.headerLength)).encoded()
                #expect(bytes.count == length)
                let half = bytes.count / 2
                try await outbound.write(.custom(WebSocketFrame(fin: false, opcode: .binary, data: ByteBuffer(bytes: bytes[..<half]))))
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(bytes: bytes[half...]))))
                var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                if !refused {
                    // Read and answered (the relay has no APNs here): the connection stays open.
                    guard case .binary(let answer)? = try await iterator.next() else { return }
                    #expect(try RelayFrame(decoding: Array(answer.readableBytesView)).seq == 1)
                    try await outbound.close(.normalClosure, reason: nil)
                }
                while try await iterator.next() != nil {}
            }
            if refused {
                #expect(close?.closeCode == .policyViolation)
                #expect(close?.reason == "a message of more than \(length - 1) bytes; an ack is 9, a push at most \(length - 1)")
            } else {
                #expect(close?.closeCode == .normalClosure)
            }
        }
    }
}

/// The frames an inbox hands its writer while the accessory does not read.
@Suite("Relay inbox output")
struct InboxOutputTests {
    /// Each push is answered with a frame, and the window bounds only deliveries: an accessory
    /// that pushed without reading piled frames up without end (56 to 74 MB in 30 s).
    @Test("an accessory that pushes without reading is refused once maxUnwrittenFrames wait")
    func unreadPushAnswers() async throws {
        try await RelayServerTests.withRegisteredStore("relay-unread-pushes") { store in
            let connection = InboxConnection(
                accessoryID: RelayServerTests.accessory, token: RelayServerTests.inbox.text, store: store, pusher: nil, pushes: RateGate(rate: .pushes),
                logger: Logger(label: "relay-test", factory: { _ in SwiftLogNoOpLogHandler() }), gate: LogGate(LogThrottle(burst: 5, interval: .seconds(10))),
                now: { Date() }
            )
            let running = Task { await connection.run() }
            connection.opened()
            for id in 1...UInt64(connection.maxUnwrittenFrames + 10) {
                await connection.receive(RelayFrame.push(id: id, body: Array("{}".utf8)).encoded())
            }
            connection.finished()
            await running.value
            var frames = 0
            var ending: InboxConnection.Ending?
            for await output in connection.output {
                switch output {
                case .frame: frames += 1
                case .close(let reason): ending = reason
                }
            }
            #expect(frames == connection.maxUnwrittenFrames)
            #expect(ending == .refused(RelayError(.protocolViolation, "the accessory does not read what the relay sends (\(connection.maxUnwrittenFrames) frames wait)")))
        }
    }
}
