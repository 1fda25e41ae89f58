import NIOCore
import NIOHTTPTypes

/// Closes the connection when a request has not arrived whole (its head, body and end) within
/// `timeout` of its head. The idle timeout restarts at every byte, and the server answers a
/// request it refuses (401, 413) before its body has come, then reads the rest of the body to
/// throw it away: a client with no token held a connection for as long as it sent one byte of
/// body every few seconds.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let timeout: TimeAmount
    private var close = ScheduledClose()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: close.arm(context, in: timeout)
        case .body: break
        case .end: close.cancel()
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        close.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close.cancel()
    }
}
