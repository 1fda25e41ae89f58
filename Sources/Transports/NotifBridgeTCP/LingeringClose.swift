import NIOCore

/// The graceful end of a TCP link. Closing a socket whose peer's bytes sit unread makes the
/// kernel answer with a reset, and the peer's kernel then drops what it had received but not yet
/// read: the receipts of the accessory's last commit, when it stops while the iPhone is still
/// sending. So a link that ends normally half-closes instead, once what was written is flushed,
/// and reads on, discarding, until the peer closes too or `TCPLink.lingerTimeout` passes.
///
/// The handler sits next to the socket. It starts discarding when the link ends (or at the
/// outbound half-closure that NIOAsyncChannel issues when the link's writer finishes, if that
/// comes first), and asks for reads itself, since no one consumes the link's inbound stream any
/// more. NIO shuts the socket's sending half only once its pending writes are out
/// (`ChannelEvent.outputClosed`), so the two waits are timed apart: the flush, which a slow
/// reader stretches, has its timeout (`TCPLink.flushTimeout` unless the listener says
/// otherwise) from the moment the link ends (``Ending``), and the linger's own time starts at
/// the half-closure.
final class LingeringCloseHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Sent down the pipeline when the link ends, before its writer finishes. The writer
    /// half-closes only once every chunk yielded to it is handed to the channel, which a peer
    /// that reads nothing can put off for ever, so the flush's time starts here.
    struct Ending: Sendable {}

    private let flushTimeout: TimeAmount
    private var lingering = false
    /// The flush's backstop, then the linger's: whichever is armed closes the channel.
    private var backstop: Scheduled<Void>?

    init(flushTimeout: TimeAmount = TCPLink.flushTimeout) {
        self.flushTimeout = flushTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard lingering else { return context.fireChannelReadComplete() }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, let event = event as? ChannelEvent, event == .outputClosed {
            arm(context, after: TCPLink.lingerTimeout)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        backstop?.cancel()
        backstop = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        backstop?.cancel()
        backstop = nil
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Ending else { return context.triggerUserOutboundEvent(event, promise: promise) }
        startLingering(context)
        promise?.succeed(())
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .output { startLingering(context) }
        context.close(mode: mode, promise: promise)
    }

    /// Discards what the peer sends from now on (so that it is never left blocked on a full
    /// socket while the last writes flush) and arms the flush's backstop, once.
    private func startLingering(_ context: ChannelHandlerContext) {
        guard !lingering, context.channel.isActive else { return }
        lingering = true
        arm(context, after: flushTimeout)
        context.read()
    }

    private func arm(_ context: ChannelHandlerContext, after timeout: TimeAmount) {
        backstop?.cancel()
        let channel = context.channel
        backstop = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}

extension TCPLink {
    /// How long a link that ended waits for its peer to close after its own half-closure.
    public static let lingerTimeout = TimeAmount.seconds(2)

    /// How long a link that ended may take to hand its last writes to the kernel before it
    /// half-closes. Past it the link closes, and what was not handed over is lost: a peer that
    /// reads nothing cannot hold the link open.
    public static let flushTimeout = TimeAmount.seconds(5)

    /// Ends the link gracefully (``LingeringCloseHandler``): finishing the writer flushes what
    /// was written and half-closes; the channel closes when the peer does, or at a timeout.
    static func linger(_ channel: any Channel, finishing outbound: NIOAsyncChannelOutboundWriter<[UInt8]>) async {
        channel.triggerUserOutboundEvent(LingeringCloseHandler.Ending(), promise: nil)
        outbound.finish()
        try? await channel.closeFuture.get()
    }
}
