import NIOCore
import NIOEmbedded
import Testing
@testable import NotifBridgeTCP

/// The lingering close's two timers on a clock the test moves: the flush gets
/// `TCPLink.flushTimeout` from the link's end, and the peer `TCPLink.lingerTimeout` from the
/// half-closure, however long the flush took. The socket tests show the same with real time;
/// here no busy machine can blur where each wait starts.
@Suite("The lingering close's timers")
struct LingeringTimersTests {
    static func channel() throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(handler: LingeringCloseHandler(), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, loop)
    }

    static func ending(_ channel: EmbeddedChannel) {
        channel.pipeline.triggerUserOutboundEvent(LingeringCloseHandler.Ending(), promise: nil)
    }

    @Test("A flush that never ends is cut at the flush timeout, counted from the link's end")
    func flushBounded() throws {
        let (channel, loop) = try Self.channel()
        Self.ending(channel)
        loop.advanceTime(by: TCPLink.flushTimeout - .milliseconds(1))
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test("The linger's 2 s start at the half-closure, however late in the flush it comes", arguments: [0, 1_000, 4_900])
    func lingerFromHalfClosure(flushMilliseconds: Int64) throws {
        let (channel, loop) = try Self.channel()
        Self.ending(channel)
        loop.advanceTime(by: .milliseconds(flushMilliseconds))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.outputClosed)
        loop.advanceTime(by: TCPLink.lingerTimeout - .milliseconds(1))
        #expect(channel.isActive, "the peer still has its time")
        loop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test("What the peer sends after the link's end is read and dropped")
    func discards() throws {
        let (channel, _) = try Self.channel()
        try channel.writeInbound(ByteBuffer(bytes: [1]))
        Self.ending(channel)
        try channel.writeInbound(ByteBuffer(bytes: [2]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        _ = try? channel.finish()
    }
}
