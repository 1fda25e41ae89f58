import NIOCore

/// Closes the connection when its peer has taken nothing of what it was sent for `timeout`:
/// the channel stayed unwritable (NIO's buffer of unsent bytes above its high-water mark) all
/// that time. A WebSocket client that stopped reading held its connection for ever, with the
/// server's writes, pings and close waiting on it: the relay's inbox, the dashboard's live page.
final class StalledReaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private var close = ScheduledClose()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            close.cancel()
        } else if !close.isArmed {
            close.arm(context, in: timeout)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        close.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close.cancel()
    }
}
