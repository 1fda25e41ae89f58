import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NotifBridgeRelayCore
import NotifBridgeTCP
import Synchronization
import WSClient
import WSCore

/// The accessory's side of its inbox at a relay (docs/PROTOCOL.md §11): one WebSocket at a time,
/// opened again after any failure with a growing delay. Each delivered message goes to the
/// `receive` closure, and its ack goes out once that returns: `receive` returns once what the
/// message carried is on disk, or once the message is refused for good (a replay, a forgery),
/// so that it does not hold back the relay's window. If `receive` throws, nothing is acked and
/// the connection is dropped: the relay sends the message again on the next one.
public struct RelayInboxClient: Sendable {
    public struct Configuration: Sendable {
        /// The relay's base URL: `ws://host:port` or `wss://host` (TLS with the system's roots).
        public var relay: String
        public var accessoryID: String
        public var token: String
        /// Reads the token again before each attempt, when given: registering the accessory again
        /// (`relay register`) replaces its token, and the relay then closes this inbox (1008).
        /// A failed read keeps the token used before.
        public var readToken: (@Sendable () throws -> String)?
        public var limits: RelayLimits
        /// The first delay before connecting again, doubled after each failure up to `maxRetryDelay`;
        /// each wait is between half the delay and the whole of it, at random.
        public var minRetryDelay: Duration
        public var maxRetryDelay: Duration
        /// How long a peer may take to open the inbox (TCP, TLS and the WebSocket upgrade) before
        /// the attempt is given up and its socket closed.
        public var handshakeTimeout: Duration
        /// A ping goes out this often on an open inbox, and the connection is closed when a ping
        /// has had no pong by the time the next is due: a connection the network dropped without
        /// a word (a NAT that forgot it, Wi-Fi gone) is found within two intervals and opened
        /// again, instead of waiting for ever for deliveries that cannot come.
        public var pingInterval: Duration
        /// The certificates a `wss://` relay's chain must lead to; nil for the system's roots.
        public var trustRoots: [NIOSSLCertificate]?
        /// Where in its range each wait falls, from 0 (half the delay) up to 1 (all of it):
        /// random, or fixed by a test.
        public var jitter: @Sendable () -> Double

        public init(
            relay: String, accessoryID: String, token: String, readToken: (@Sendable () throws -> String)? = nil, limits: RelayLimits = RelayLimits(),
            minRetryDelay: Duration = .seconds(1), maxRetryDelay: Duration = .seconds(60),
            handshakeTimeout: Duration = .seconds(15), pingInterval: Duration = .seconds(30), trustRoots: [NIOSSLCertificate]? = nil,
            jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.relay = relay
            self.accessoryID = accessoryID
            self.token = token
            self.readToken = readToken
            self.limits = limits
            self.minRetryDelay = minRetryDelay
            self.maxRetryDelay = maxRetryDelay
            self.handshakeTimeout = handshakeTimeout
            self.pingInterval = pingInterval
            self.trustRoots = trustRoots
            self.jitter = jitter
        }

        var inboxURL: String {
            (relay.hasSuffix("/") ? String(relay.dropLast()) : relay) + "/v1/accessories/\(accessoryID)/inbox"
        }
    }

    public enum Event: Sendable, Equatable {
        case connected
        /// The connection ended or could not be made; the client tries again after `retryIn`.
        case disconnected(reason: String, retryIn: Duration)
    }

    /// Why the client dropped a connection itself.
    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    public let configuration: Configuration
    public let logger: Logger
    private let pushes = PushLane()

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Hands a reply for the iPhone (a §10.6 push body) to the relay on the open connection and
    /// returns the relay's answer, or why there is none.
    public func push(_ body: [UInt8]) async -> PushAnswer {
        await pushes.push(body)
    }

    /// Runs until the task is cancelled.
    public func run(
        onEvent: @escaping @Sendable (Event) -> Void = { _ in },
        receive: @escaping @Sendable (_ seq: UInt64, _ message: [UInt8]) async throws -> Void
    ) async {
        var delay = configuration.minRetryDelay
        var token = configuration.token
        while !Task.isCancelled {
            if let readToken = configuration.readToken {
                do {
                    token = try readToken()
                } catch {
                    logger.warning("cannot read the inbox token again (\(error)); trying the one read before")
                }
            }
            let reason: String
            let carried = Carried()
            do {
                let close = try await connectOnce(token: token, onEvent: onEvent, receive: receive, carried: carried)
                reason = close.map { frame in
                    frame.reason.flatMap { $0.isEmpty ? nil : "the relay closed the inbox: \($0)" } ?? "the relay closed the inbox (\(frame.closeCode))"
                }
                    ?? "the inbox connection ended without a close from the relay (the connection dropped, or a ping went unanswered for \(configuration.pingInterval))"
            } catch let declined as InboxChannel.Declined {
                reason = await refusal(declined.status, token: token)
            } catch is InboxChannel.HandshakeTimeout {
                reason = "the relay did not open the inbox within \(configuration.handshakeTimeout) (it took the connection and answered nothing)"
            } catch {
                reason = tlsErrorText(error) ?? socketErrorText(error)
            }
            // A connection that carried messages, or stayed open through a ping interval (so a
            // ping was answered), was a success: start the delays over. Without the second,
            // an idle accessory's delay grew with every relay restart, to a minute behind.
            if carried.succeeded(stableAfter: configuration.pingInterval) { delay = configuration.minRetryDelay }
            guard !Task.isCancelled else { return }
            let wait = Self.jittered(delay, configuration.jitter())
            onEvent(.disconnected(reason: reason, retryIn: wait))
            try? await Task.sleep(for: wait)
            delay = min(delay * 2, configuration.maxRetryDelay)
        }
    }

    /// Between half the delay and the whole of it, by `fraction` (0 up to 1): after a relay
    /// restarts, its accessories do not all come back in the same instant, and again at each
    /// doubling.
    static func jittered(_ delay: Duration, _ fraction: Double) -> Duration {
        delay / 2 + delay / 2 * min(max(fraction, 0), 1)
    }

    /// Why the relay would not open the inbox. A relay on Hummingbird answers every declined
    /// upgrade 400 without a body, so on anything but 401 the relay is asked again with a plain
    /// GET, which it answers 401 for an unknown accessory or a wrong token and 400 for the right
    /// token (docs/PROTOCOL.md §11).
    private func refusal(_ status: HTTPResponseStatus?, token: String) async -> String {
        let refused = "the relay refused accessory \(configuration.accessoryID)'s inbox token (401): check --relay-id and the token file, or register the accessory again (`notifbridge relay register`)"
            + (configuration.readToken == nil ? "" : " and put its new inbox token in the file, which is read again before each attempt")
        if status == .unauthorized { return refused }
        var url = configuration.inboxURL
        if url.hasPrefix("ws") { url = "http" + url.dropFirst(2) }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let answer = await Self.probe(request, trustRoots: configuration.trustRoots)
        if answer == .unauthorized { return refused }
        guard let status = answer ?? status else { return "the relay would not open the inbox, and closed the connection before saying why" }
        return "the relay would not open the inbox: \(url) answered \(status.code) \(status.reasonPhrase)"
    }

    /// The status of one plain request, within 10 s; nil when none came. With trust roots of its
    /// own the request needs a client of its own, shut down after it.
    private static func probe(_ request: HTTPClientRequest, trustRoots: [NIOSSLCertificate]?) async -> HTTPResponseStatus? {
        guard let trustRoots else { return try? await HTTPClient.shared.execute(request, timeout: .seconds(10)).status }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(trustRoots)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let status = try? await client.execute(request, timeout: .seconds(10)).status
        try? await client.shutdown()
        return status
    }

    private func connectOnce(
        token: String,
        onEvent: @escaping @Sendable (Event) -> Void,
        receive: @escaping @Sendable (UInt64, [UInt8]) async throws -> Void,
        carried: Carried
    ) async throws -> WebSocketCloseFrame? {
        let limits = configuration.limits
        let channel = try InboxChannel(
            url: configuration.inboxURL, headers: ["Authorization": "Bearer \(token)"], trustRoots: configuration.trustRoots,
            maxFrameSize: RelayFrame.headerLength + limits.maxMessageLength,
            handshakeTimeout: configuration.handshakeTimeout, pingInterval: configuration.pingInterval
        ) { inbound, outbound, _ in
            carried.opened.withLock { $0 = .now }
            onEvent(.connected)
            let (frames, send) = AsyncStream.makeStream(of: [UInt8].self)
            pushes.opened(send)
            defer { pushes.closed() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Pushes go out as they come; acks go out from the reader below.
                group.addTask {
                    for await frame in frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
                }
                defer { group.cancelAll() }
                var last: UInt64 = 0
                // A deliver frame is at most 9 + maxMessageLength bytes; anything longer ends the
                // connection before it is buffered.
                for try await message in inbound.messages(maxSize: RelayFrame.headerLength + limits.maxMessageLength) {
                    guard case .binary(let buffer) = message else { throw Violation(description: "the relay sent a text message") }
                    switch try RelayFrame(decoding: buffer.readableBytesView, limits: limits) {
                    case .deliver(let seq, let body):
                        guard seq > last else { throw Violation(description: "the relay sent message \(seq) after \(last)") }
                        last = seq
                        try await receive(seq, body)
                        try await outbound.write(.binary(ByteBuffer(bytes: RelayFrame.ack(seq: seq).encoded())))
                        carried.value.withLock { $0 = true }
                    case .pushed(let id, let status):
                        guard pushes.answered(id, status) else { throw Violation(description: "the relay answered push \(id), which was not sent") }
                    case .ack, .push:
                        throw Violation(description: "the relay sent a frame only an accessory sends")
                    }
                }
            }
        }
        let address = channel.address
        return try await ClientConnection(
            channel, address: .hostname(address.host, port: address.port), eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger
        ).run()
    }
}

/// Whether a connection delivered anything, and when it opened, set from its handler.
final class Carried: Sendable {
    let value = Mutex(false)
    let opened = Mutex<ContinuousClock.Instant?>(nil)

    /// It delivered something, or it was open for at least `stableAfter`.
    func succeeded(stableAfter: Duration) -> Bool {
        if value.withLock({ $0 }) { return true }
        guard let opened = opened.withLock({ $0 }) else { return false }
        return ContinuousClock.now - opened >= stableAfter
    }
}
