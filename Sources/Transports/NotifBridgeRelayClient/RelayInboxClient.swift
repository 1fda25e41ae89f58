import AsyncHTTPClient
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import NotifBridgeRelayCore
import NotifBridgeTCP
import Synchronization

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
        public var limits: RelayLimits
        /// The first delay before connecting again, doubled after each failure up to `maxRetryDelay`.
        public var minRetryDelay: Duration
        public var maxRetryDelay: Duration

        public init(
            relay: String, accessoryID: String, token: String, limits: RelayLimits = RelayLimits(),
            minRetryDelay: Duration = .seconds(1), maxRetryDelay: Duration = .seconds(60)
        ) {
            self.relay = relay
            self.accessoryID = accessoryID
            self.token = token
            self.limits = limits
            self.minRetryDelay = minRetryDelay
            self.maxRetryDelay = maxRetryDelay
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
    /// returns the relay's answer; nil when no connection is open, or it ended before the answer.
    public func push(_ body: [UInt8]) async -> RelayFrame.PushStatus? {
        await pushes.push(body)
    }

    /// Runs until the task is cancelled.
    public func run(
        onEvent: @escaping @Sendable (Event) -> Void = { _ in },
        receive: @escaping @Sendable (_ seq: UInt64, _ message: [UInt8]) async throws -> Void
    ) async {
        var delay = configuration.minRetryDelay
        while !Task.isCancelled {
            let reason: String
            let carried = Carried()
            do {
                let close = try await connectOnce(onEvent: onEvent, receive: receive, carried: carried)
                reason = close.map { "the relay closed the inbox (\($0.closeCode))" } ?? "the inbox connection ended"
            } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
                reason = await upgradeRefusal() ?? "\(error)"
            } catch {
                reason = socketErrorText(error)
            }
            // A connection that carried messages was a success: start the delays over.
            if carried.value.withLock({ $0 }) { delay = configuration.minRetryDelay }
            guard !Task.isCancelled else { return }
            onEvent(.disconnected(reason: reason, retryIn: delay))
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, configuration.maxRetryDelay)
        }
    }

    /// Why the relay would not upgrade the inbox, asked of it with a plain GET (a WebSocket
    /// client only learns that the upgrade failed): the relay answers 401 to an unknown
    /// accessory or a wrong token, and 400 to the right token.
    private func upgradeRefusal() async -> String? {
        var url = configuration.inboxURL
        if url.hasPrefix("ws") { url = "http" + url.dropFirst(2) }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)")
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)) else { return nil }
        switch response.status.code {
        case 401:
            return "the relay refused accessory \(configuration.accessoryID)'s inbox token (401): check --relay-id and the token file, or register the accessory again (`notifbridge relay register`)"
        case 400:
            return nil
        default:
            return "the relay would not open the inbox: \(url) answered \(response.status.code) \(response.status.reasonPhrase)"
        }
    }

    private func connectOnce(
        onEvent: @escaping @Sendable (Event) -> Void,
        receive: @escaping @Sendable (UInt64, [UInt8]) async throws -> Void,
        carried: Carried
    ) async throws -> WebSocketCloseFrame? {
        let limits = configuration.limits
        return try await WebSocketClient.connect(
            url: configuration.inboxURL,
            configuration: .init(additionalHeaders: [.authorization: "Bearer \(configuration.token)"]),
            logger: logger
        ) { inbound, outbound, _ in
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
    }
}

/// Whether a connection delivered anything, set from its handler.
final class Carried: Sendable {
    let value = Mutex(false)
}
