import NIOCore

/// A close of a channel, due at a deadline unless cancelled first: the timeouts that bound what
/// a peer may hold (``FirstBytesTimeoutHandler``, ``RequestDeadlineHandler``,
/// ``StalledReaderHandler``). Used on the channel's event loop only.
struct ScheduledClose {
    private var deadline: Scheduled<Void>?

    var isArmed: Bool { deadline != nil }

    /// Closes the channel `timeout` from now, in place of any close due before.
    mutating func arm(_ context: ChannelHandlerContext, in timeout: TimeAmount) {
        cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    mutating func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}
