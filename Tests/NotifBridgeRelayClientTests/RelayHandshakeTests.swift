import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// Peers that are not a working relay at the transport level: one takes the inbox's TCP
/// connection and never answers the WebSocket upgrade (another service on the relay's port, a hung
/// relay), one opens the WebSocket and then never answers a ping (a connection the network
/// dropped). The client gives each up, closes its socket and tries again, and stops at once when
/// cancelled.
@Suite("Relay inbox client: a peer that stops answering")
struct RelayHandshakeTests {
    /// Takes connections; answers the upgrade when `upgrades` is set, and nothing else ever.
    final class Peer: Sendable {
        final class Connections: Sendable {
            let accepted = Mutex(0)
            let open = Mutex<[any Channel]>([])
            /// The first byte of each frame the client sent after the upgrade.
            let frames = Mutex<[UInt8]>([])
        }
        let connections = Connections()
        let channel: any Channel

        /// With `tls`, the peer speaks TLS with the test CA's certificate for localhost; with
        /// `answers` ("403 Forbidden"), it answers every request so and closes.
        init(upgrades: Bool = false, tls: NIOSSLContext? = nil, answers: String? = nil, sends: [UInt8] = []) async throws {
            let connections = connections
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { child in
                    connections.accepted.withLock { $0 += 1 }
                    connections.open.withLock { $0.append(child) }
                    child.closeFuture.whenComplete { _ in connections.open.withLock { $0.removeAll { $0 === child } } }
                    return child.eventLoop.makeCompletedFuture {
                        if let tls { try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                        if upgrades { try child.pipeline.syncOperations.addHandler(Upgrade(connections: connections, then: sends)) }
                        if let answers { try child.pipeline.syncOperations.addHandler(Answer(status: answers)) }
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }

        var accepted: Int { connections.accepted.withLock { $0 } }
        var open: Int { connections.open.withLock { $0.count } }
        var frames: [UInt8] { connections.frames.withLock { $0 } }
        var url: String { "ws://127.0.0.1:\(channel.localAddress!.port!)" }

        func close() {
            for child in connections.open.withLock({ $0 }) { child.close(promise: nil) }
            channel.close(promise: nil)
        }
    }

    /// Accepts the upgrade request correctly, then only notes what the client sends.
    final class Upgrade: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let connections: Peer.Connections
        /// Bytes sent right after the upgrade's answer (frames, as the server writes them).
        let then: [UInt8]
        var request = ""
        var upgraded = false

        init(connections: Peer.Connections, then: [UInt8]) {
            self.connections = connections
            self.then = then
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            if upgraded {
                // Frames from the client are small here: each read starts one.
                if let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) { connections.frames.withLock { $0.append(first) } }
                return
            }
            request += String(buffer: bytes)
            guard request.contains("\r\n\r\n"), let key = Self.header("Sec-WebSocket-Key", in: request) else { return }
            let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
            let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(Data(digest).base64EncodedString())\r\n\r\n"
            upgraded = true
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: Array(response.utf8) + then)), promise: nil)
        }

        static func header(_ name: String, in request: String) -> String? {
            for line in request.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    /// Answers the first request with `status` and no body, then closes.
    final class Answer: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let status: String
        var request = ""

        init(status: String) { self.status = status }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            request += String(buffer: unwrapInboundIn(data))
            guard request.contains("\r\n\r\n") else { return }
            let response = "HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in context.close(promise: nil) }
        }
    }

    static func client(
        _ url: String, handshakeTimeout: Duration, pingInterval: Duration = .seconds(30), trustRoots: [NIOSSLCertificate]? = nil
    ) -> RelayInboxClient {
        RelayInboxClient(
            configuration: .init(
                relay: url, accessoryID: "watch-1", token: "token", minRetryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(10),
                handshakeTimeout: handshakeTimeout, pingInterval: pingInterval, trustRoots: trustRoots
            ),
            logger: Logger(label: "inbox-client", factory: { _ in SwiftLogNoOpLogHandler() })
        )
    }

    /// Runs a client, handing each event to the returned stream.
    static func run(_ client: RelayInboxClient) -> (Task<Void, Never>, AsyncStream<RelayInboxClient.Event>) {
        let (events, continuation) = AsyncStream<RelayInboxClient.Event>.makeStream()
        let running = Task {
            await client.run(onEvent: { continuation.yield($0) }) { _, _ in Issue.record("received from a peer that sends nothing") }
            continuation.finish()
        }
        return (running, events)
    }

    /// The client's first event; the client is stopped once it has come.
    static func firstEvent(of client: RelayInboxClient) async -> RelayInboxClient.Event? {
        let (running, events) = run(client)
        var first: RelayInboxClient.Event?
        for await event in events {
            first = event
            break
        }
        running.cancel()
        await running.value
        return first
    }

    @Test("an unanswered handshake ends after the timeout, its socket closed, and the client tries again", .timeLimit(.minutes(1)))
    func handshakeTimesOut() async throws {
        let peer = try await Peer()
        defer { peer.close() }
        let (running, events) = Self.run(Self.client(peer.url, handshakeTimeout: .milliseconds(200)))
        var reasons: [String] = []
        for await event in events {
            switch event {
            case .disconnected(let reason, _): reasons.append(reason)
            case .connected: Issue.record("reported connected to a peer that never opened the inbox")
            }
            if reasons.count == 3 { break }
        }
        running.cancel()
        await running.value
        let timedOut = "the relay did not open the inbox within 0.2 seconds (it took the connection and answered nothing)"
        #expect(reasons == [timedOut, timedOut, timedOut])
        // The kernel completes each connection before the peer's loop accepts it; under load that
        // accept can come after the client gave the attempt up, so wait for it.
        try await TestWait.until("the peer took three connections") { peer.accepted >= 3 }
        // Each attempt given up closed its socket: none is left behind.
        try await TestWait.until("the peer's sockets closed") { peer.open == 0 }
    }

    @Test("cancelled while the peer is silent, the client stops at once and closes the socket", .timeLimit(.minutes(1)))
    func cancelDuringHandshake() async throws {
        let peer = try await Peer()
        defer { peer.close() }
        let (running, events) = Self.run(Self.client(peer.url, handshakeTimeout: .seconds(3600)))
        try await TestWait.until("the peer took the connection") { peer.accepted == 1 }
        running.cancel()
        await running.value
        var after: [RelayInboxClient.Event] = []
        for await event in events { after.append(event) }
        #expect(after.isEmpty, "no event for a cancelled attempt: \(after)")
        try await TestWait.until("the peer's socket closed") { peer.open == 0 }
        #expect(peer.accepted == 1)
    }

    @Test("an open inbox whose pings go unanswered is closed and opened again", .timeLimit(.minutes(1)))
    func unansweredPings() async throws {
        let peer = try await Peer(upgrades: true)
        defer { peer.close() }
        let (running, events) = Self.run(Self.client(peer.url, handshakeTimeout: .seconds(3600), pingInterval: .milliseconds(100)))
        var seen: [RelayInboxClient.Event] = []
        for await event in events {
            seen.append(event)
            if seen.count == 3 { break }
        }
        running.cancel()
        await running.value
        #expect(seen.first == .connected)
        guard seen.count == 3, case .disconnected(let reason, _) = seen[1], seen[2] == .connected else {
            Issue.record("expected connected, disconnected, connected: \(seen)")
            return
        }
        #expect(reason == "the inbox connection ended without a close from the relay (the connection dropped, or a ping went unanswered for 0.1 seconds)")
        // The client pinged (FIN and opcode 9), and closed the connection it gave up.
        #expect(peer.frames.first == 0x89, "\(peer.frames)")
        try await TestWait.until("the peer took a second connection") { peer.accepted >= 2 }
        try await TestWait.until("the peer's sockets closed") { peer.open == 0 }
    }

    @Test("wss://: the inbox opens over TLS, the relay's chain checked against the given roots", .timeLimit(.minutes(1)))
    func overTLS() async throws {
        let tls = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(StandInFixtures.text("server.pem").utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(StandInFixtures.text("server-key.pem").utf8), format: .pem))
            )
        )
        let peer = try await Peer(upgrades: true, tls: tls)
        defer { peer.close() }
        let port = peer.channel.localAddress!.port!
        let url = "wss://localhost:\(port)"
        // By name (checked against the certificate's DNS name) and by address (its IP address).
        for relay in [url, "wss://127.0.0.1:\(port)"] {
            let first = await Self.firstEvent(of: Self.client(relay, handshakeTimeout: .seconds(30), trustRoots: try StandInFixtures.caCertificates()))
            #expect(first == .connected, "\(relay): \(String(describing: first))")
        }

        // The system's roots do not know the test CA: refused, and said why.
        let refusal = await Self.firstEvent(of: Self.client(url, handshakeTimeout: .seconds(30)))
        guard case .disconnected(let reason, _) = refusal else {
            Issue.record("expected a refusal, got \(String(describing: refusal))")
            return
        }
        #expect(reason == "the TLS handshake with the relay failed: CERTIFICATE_VERIFY_FAILED")
    }

    /// A relay that declines the upgrade with a status of its own is reported by that status (a
    /// plain request asks why, and gets the same answer here).
    @Test("a declined upgrade is reported by its status: 401 as the token, others as they came", arguments: [
        ("401 Unauthorized", "the relay refused accessory watch-1's inbox token (401)"),
        ("403 Forbidden", "/v1/accessories/watch-1/inbox answered 403 Forbidden"),
        ("404 Not Found", "/v1/accessories/watch-1/inbox answered 404 Not Found"),
    ])
    func declined(status: String, reason: String) async throws {
        let peer = try await Peer(answers: status)
        defer { peer.close() }
        let event = await Self.firstEvent(of: Self.client(peer.url, handshakeTimeout: .seconds(30)))
        guard case .disconnected(let said, _) = event else {
            Issue.record("expected a refusal, got \(String(describing: event))")
            return
        }
        #expect(said.contains(reason), "\(said)")
    }

    /// §11.5 has the relay fragment long messages, but a relay that sends the largest message in
    /// one frame is read too: the frame limit is the message limit.
    @Test("the largest message in one unfragmented frame is received", .timeLimit(.minutes(1)))
    func unfragmentedLargest() async throws {
        let message = [UInt8](repeating: 0xA5, count: RelayLimits().maxMessageLength)
        let payload = RelayFrame.deliver(seq: 1, message: message).encoded()
        var frame: [UInt8] = [0x82, 127]
        withUnsafeBytes(of: UInt64(payload.count).bigEndian) { frame += $0 }
        let peer = try await Peer(upgrades: true, sends: frame + payload)
        defer { peer.close() }
        let (got, arrived) = AsyncStream.makeStream(of: Int.self)
        let client = Self.client(peer.url, handshakeTimeout: .seconds(30))
        let running = Task {
            await client.run { seq, body in
                #expect(seq == 1 && body == message)
                arrived.yield(body.count)
            }
        }
        var iterator = got.makeAsyncIterator()
        #expect(await iterator.next() == message.count)
        running.cancel()
        await running.value
    }
}
