import NIOCore

/// The graceful end of a TCP link. Closing a socket whose peer's bytes sit unread makes the
/// kernel answer with a reset, and the peer's kernel then drops what it had received but not yet
/// read: the receipts of the accessory's last commit, when it stops while the iPhone is still
/// sending. So a link that ends normally half-closes instead, once what was written is flushed,
/// and reads on, discarding, until the peer closes too or `TCPLink.lingerTimeout` passes.
///
/// The handler sits next to the socket. It starts discarding at the outbound half-closure that
/// NIOAsyncChannel issues when the link's writer finishes, and asks for reads itself, since no
/// one consumes the link's inbound stream any more.
final class LingeringCloseHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var lingering = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard lingering else { return context.fireChannelReadComplete() }
        context.read()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        context.close(mode: mode, promise: promise)
        if mode == .output, !lingering {
            lingering = true
            context.read()
        }
    }
}

extension TCPLink {
    /// How long a link that ended waits for its peer to close after its own half-closure.
    public static let lingerTimeout = TimeAmount.seconds(2)

    /// Ends the link gracefully (``LingeringCloseHandler``): finishing the writer flushes what
    /// was written and half-closes; the channel closes when the peer does, or at the timeout.
    static func linger(_ channel: any Channel, finishing outbound: NIOAsyncChannelOutboundWriter<[UInt8]>) async {
        let backstop = channel.eventLoop.scheduleTask(in: lingerTimeout) { channel.close(promise: nil) }
        outbound.finish()
        try? await channel.closeFuture.get()
        backstop.cancel()
    }
}
