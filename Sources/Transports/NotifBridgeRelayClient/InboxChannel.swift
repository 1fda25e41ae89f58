import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import Synchronization
import WSClient
@_spi(WSInternal) import WSCore

/// The inbox's WebSocket connection, set up here rather than by swift-websocket's
/// `WebSocketClient`: that client waits for the upgrade with no deadline and keeps the socket to
/// itself, so a peer that takes the connection and answers nothing (another service on the
/// relay's port, a hung relay) held the inbox, and the accessory's shutdown, for ever. This
/// channel closes the socket when the handshake outlives its deadline or the task is cancelled,
/// and hands the open WebSocket to the library's own frame handler (the SPI that
/// hummingbird-websocket's server uses the same way), which answers pings, sends its own, and
/// closes cleanly.
struct InboxChannel: ClientConnectionChannel {
    struct Address: Sendable {
        var host: String
        var port: Int
        var tls: Bool
        /// The request target: the URL's path and query.
        var target: String
        var hostHeader: String
        var origin: String

        /// The name TLS sends and checks the certificate for; nil for an IP address, which SNI
        /// cannot carry and NIOSSL then checks against the connected address.
        var serverName: String? {
            (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        }

        /// Parses a `ws://` or `wss://` URL.
        init(url: String) throws {
            guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
                let host = parts.host, !host.isEmpty
            else { throw WebSocketClientError.invalidURL }
            tls = scheme == "wss"
            let port = parts.port ?? (tls ? 443 : 80)
            guard (1...65535).contains(port) else { throw WebSocketClientError.invalidURL }
            self.host = host
            self.port = port
            let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
            target = path + (parts.percentEncodedQuery.map { "?\($0)" } ?? "")
            let named = host.contains(":") ? "[\(host)]" : host
            hostHeader = parts.port.map { "\(named):\($0)" } ?? named
            origin = "\(scheme)://\(named)"
        }
    }

    /// The handshake did not finish within the deadline; the socket is closed.
    struct HandshakeTimeout: Error {}

    /// The relay answered the upgrade with an ordinary response: its status says why (401, a
    /// wrong token or an unknown accessory); nil when the connection ended before the status.
    struct Declined: Error {
        var status: HTTPResponseStatus?
    }

    enum Upgraded: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case declined(EventLoopFuture<HTTPResponseStatus>)
    }

    /// The channel with the handshake's outcome to come, and whether the deadline closed it.
    struct Value: Sendable {
        let channel: any Channel
        let upgraded: EventLoopFuture<Upgraded>
        let expired: Expired
    }

    final class Expired: Sendable {
        let value = Atomic(false)
    }

    struct Context: WebSocketContext {
        let logger: Logger
    }

    let address: Address
    let headers: HTTPHeaders
    let tls: NIOSSLContext?
    let handshakeTimeout: Duration
    let pingInterval: Duration
    let handler: WebSocketDataHandler<Context>

    /// The largest frame taken: the largest message §11.2 allows (a relay may send it unfragmented;
    /// ours sends 16 KiB fragments). Anything longer ends the connection before it is buffered.
    let maxFrameSize: Int

    init(
        url: String, headers: HTTPHeaders, trustRoots: [NIOSSLCertificate]?, maxFrameSize: Int, handshakeTimeout: Duration,
        pingInterval: Duration, handler: @escaping WebSocketDataHandler<Context>
    ) throws {
        address = try Address(url: url)
        var all = HTTPHeaders([("Host", address.hostHeader), ("Origin", address.origin)])
        all.add(contentsOf: headers)
        self.headers = all
        if address.tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let trustRoots { configuration.trustRoots = .certificates(trustRoots) }
            // Closing, the client waits this long for the relay's close_notify. Against a NIO TLS
            // server the wait ran to its end every time (5 s by default, added to each stop of
            // the accessory; `RelayHandshakeTests`); everything the inbox owed is sent by then.
            configuration.shutdownTimeout = .seconds(1)
            tls = try NIOSSLContext(configuration: configuration)
        } else {
            tls = nil
        }
        self.maxFrameSize = maxFrameSize
        self.handshakeTimeout = handshakeTimeout
        self.pingInterval = pingInterval
        self.handler = handler
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            if let tls {
                let handler = try NIOSSLClientHandler(context: tls, serverHostname: address.serverName)
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            }
            let upgrader = NIOTypedWebSocketClientUpgrader<Upgraded>(maxFrameSize: maxFrameSize) { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                }
            }
            let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: address.target, headers: headers)
            var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                upgradeConfiguration: .init(upgradeRequestHead: request, upgraders: [upgrader]) { channel in
                    // The response that declined comes down the pipeline once this returns.
                    channel.eventLoop.makeCompletedFuture {
                        let status = ResponseStatus(promise: channel.eventLoop.makePromise())
                        try channel.pipeline.syncOperations.addHandler(status)
                        return .declined(status.future)
                    }
                }
            )
            configuration.leftOverBytesStrategy = .forwardBytes
            let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: configuration)
            // The deadline runs from the socket's creation, so it covers TLS and the upgrade;
            // closing the channel fails the upgrade's future.
            let expired = Expired()
            let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(handshakeTimeout)) {
                expired.value.store(true, ordering: .sequentiallyConsistent)
                channel.close(promise: nil)
            }
            upgraded.whenComplete { _ in deadline.cancel() }
            return Value(channel: channel, upgraded: upgraded, expired: expired)
        }
    }

    func handle(value: Value, logger: Logger) async throws -> WebSocketCloseFrame? {
        let upgraded: Upgraded
        do {
            upgraded = try await withTaskCancellationHandler {
                try await value.upgraded.get()
            } onCancel: {
                value.channel.close(promise: nil)
            }
        } catch {
            if value.expired.value.load(ordering: .sequentiallyConsistent) { throw HandshakeTimeout() }
            throw error
        }
        switch upgraded {
        case .declined(let status):
            defer { value.channel.close(promise: nil) }
            throw Declined(status: try? await status.get())
        case .webSocket(let webSocket):
            return try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(extensions: [], autoPing: .enabled(timePeriod: pingInterval), validateUTF8: false, maxFrameSize: maxFrameSize),
                asyncChannel: webSocket,
                context: Context(logger: logger),
                handler: handler
            )
        }
    }
}

/// Takes the status of the response that declined the upgrade; the body is not needed. Lives
/// on the channel's event loop, so its state needs no lock.
final class ResponseStatus: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    let future: EventLoopFuture<HTTPResponseStatus>
    /// Nil once the status came, or once the connection ended without it.
    private var promise: EventLoopPromise<HTTPResponseStatus>?

    init(promise: EventLoopPromise<HTTPResponseStatus>) {
        self.promise = promise
        future = promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        promise?.succeed(head.status)
        promise = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
    }
}
