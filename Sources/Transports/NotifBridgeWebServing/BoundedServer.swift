import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// How many connections a web-facing server (the relay, the dashboard) holds, and for how long
/// one may hold a slot doing nothing.
public struct ConnectionLimits: Sendable {
    /// Past this many open connections the server stops accepting until one closes; further
    /// ones wait in the kernel's backlog. NIO accepts up to 4 connections per read, so at most
    /// `maxConnections + 3` are open in the process.
    public var maxConnections: Int
    /// A connection whose first request's head (its line and headers) has not arrived whole
    /// this long after it opens is closed, so idle sockets, and sockets that trickle a header
    /// line at a time, cannot hold every slot: the upgrade-capable HTTP/1 pipeline has no
    /// timeout of its own before the first request, and an idle timeout restarts at every byte.
    public var firstBytesTimeout: Duration
    /// An HTTP connection is closed when its next request has not arrived this long after the
    /// last one ended (Hummingbird's idle timeout: bytes of a trickled head do not restart it).
    /// WebSockets are not: the first request upgraded them.
    public var idleTimeout: Duration
    /// How long a WebSocket the server closed waits for the peer's answering close before the
    /// connection is closed anyway (swift-websocket's default is 15 s).
    public var closeTimeout: Duration
    /// A connection whose peer has taken nothing of what it was sent this long is closed
    /// (``StalledReaderHandler``). A slow link still takes something: the channel turns
    /// writable each time the kernel's send buffer has room again, and a minute leaves a large
    /// buffer on a slow link the time to drain that far.
    public var stalledReaderTimeout: Duration
    /// A request (head, body and end) that has not arrived whole this long after its head closes
    /// its connection (``RequestDeadlineHandler``): the largest body a server here takes, 262 KB,
    /// in 60 s is 4.4 KB/s.
    public var requestTimeout: Duration

    public init(
        maxConnections: Int, firstBytesTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), closeTimeout: Duration = .seconds(5),
        stalledReaderTimeout: Duration = .seconds(60), requestTimeout: Duration = .seconds(60)
    ) {
        self.maxConnections = maxConnections
        self.firstBytesTimeout = firstBytesTimeout
        self.idleTimeout = idleTimeout
        self.closeTimeout = closeTimeout
        self.stalledReaderTimeout = stalledReaderTimeout
        self.requestTimeout = requestTimeout
    }

    /// For `ApplicationConfiguration.availableConnectionsDelegate`.
    public func delegate(logger: Logger) -> MaximumAvailableConnections {
        .maximum(maxConnections, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with a WebSocket upgrade, as `http1WebSocketUpgrade(webSocketRouter:)`, with the
    /// first-bytes, idle, request, close and stalled-reader timeouts of `limits`.
    public static func boundedHTTP1WebSocketUpgrade<WSResponderBuilder: HTTPResponderBuilder & _HB_SendableMetatype>(
        webSocketRouter: WSResponderBuilder, limits: ConnectionLimits
    ) -> HTTPServerBuilder where WSResponderBuilder.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [RequestDeadlineHandler(timeout: TimeAmount(limits.requestTimeout))], idleTimeout: TimeAmount(limits.idleTimeout)),
            ws: .init(closeTimeout: limits.closeTimeout)
        )
        return .init { responder in
            BoundedChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                limits: limits
            )
        }
    }
}

/// Another child channel with ``FirstBytesTimeoutHandler`` and ``StalledReaderHandler`` in
/// front of its pipeline.
struct BoundedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let limits: ConnectionLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(StalledReaderHandler(timeout: TimeAmount(limits.stalledReaderTimeout)), position: .first)
            try channel.pipeline.syncOperations.addHandler(FirstBytesTimeoutHandler(timeout: TimeAmount(limits.firstBytesTimeout)), position: .first)
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes the connection if its first request's head has not arrived whole within `timeout`
/// of its opening; removes itself once it has. It sits before the HTTP decoder and reads the
/// bytes as they pass: the head is what comes before the first blank line (CRLF CRLF), and
/// nothing comes before the first request, so the scan needs no HTTP parsing.
final class FirstBytesTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private var close = ScheduledClose()
    /// The last bytes seen, so that a blank line split across reads is found.
    private var tail: [UInt8] = []
    private static let blankLine: [UInt8] = Array("\r\n\r\n".utf8)

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { close.arm(context, in: timeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !close.isArmed { close.arm(context, in: timeout) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = tail + Array(unwrapInboundIn(data).readableBytesView)
        let complete = bytes.firstRange(of: Self.blankLine) != nil
        tail = Array(bytes.suffix(Self.blankLine.count - 1))
        context.fireChannelRead(data)
        if complete {
            close.cancel()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close.cancel()
    }
}
