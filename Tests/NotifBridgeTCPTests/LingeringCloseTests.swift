import Foundation
import NIOCore
import NIOPosix
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization
import Testing

/// A side that ends a link while the peer's chunks sit unread in its socket must still deliver
/// what it wrote last: the accessory stopping under load writes the receipts of its last commit,
/// then ends while the iPhone is still sending. A plain close there answers with a reset, which
/// loses the receipts the iPhone had not read yet, and NIO fails writes it still held.
@Suite("Ending a TCP link", .timeLimit(.minutes(1)))
struct LingeringCloseTests {
    /// 100 KB: room in the two sockets' buffers, so the flush ends at once and the linger is
    /// the wait for the peer alone. (A megabyte once waited on a reader a busy CI run starved,
    /// when the linger's 2 s still counted from the start of the flush.)
    static let replies = 100
    static let replyLength = 1000

    /// Serves the listener's first connection as the accessory does: reads the peer's first
    /// chunk, writes `replies`, and ends the link (gracefully, through the linger).
    static func serveFirst(_ listener: NIOAsyncChannel<TCPLinkChannel, Never>, peer: String, replies: @escaping @Sendable () -> [[UInt8]]) async throws {
        try await listener.executeThenClose { connections, _ in
            for try await connection in connections {
                try await connection.withChunkLink(peer: peer) { link in
                    var iterator = link.inbound.makeAsyncIterator()
                    _ = try await iterator.next()
                    let chunks = replies()
                    if !chunks.isEmpty { try await link.write(chunks) }
                }
                return
            }
        }
    }

    /// A peer of raw NIO, which sends one chunk and then neither closes nor, unless `reads`,
    /// reads.
    static func rawPeer(port: Int, reads: Bool) async throws -> any Channel {
        let peer = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.autoRead, value: reads)
            .connect(host: "127.0.0.1", port: port).get()
        try await peer.writeAndFlush(ByteBuffer(bytes: [0x01, 0x00, 0xAA])).get()
        return peer
    }

    @Test("the last writes reach a peer that keeps sending; the peer then sees the link end cleanly")
    func lastWritesArrive() async throws {
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        async let served: Void = Self.serveFirst(listener, peer: "the iPhone") {
            (0..<Self.replies).map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: Self.replyLength) }
        }
        let client = try await TCPLink.connect(host: "127.0.0.1", port: port, limits: .default)
        let received = try await client.withChunkLink(peer: "the accessory") { link in
            // Sends a burst the accessory leaves unread (a chunk a millisecond, as the iPhone does
            // under load), and reads late, so that replies are still in flight when it ends. The
            // burst ends, as a phone's does, so that the 2 s linger never decides the result on a
            // machine too busy to read in time.
            let writer = Task {
                for _ in 0..<100 where !Task.isCancelled {
                    try await link.write([[UInt8](repeating: 7, count: 4000)])
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            defer { writer.cancel() }
            try await Task.sleep(for: .milliseconds(300))
            var chunks = 0
            for try await item in link.inbound {
                if case .chunk(let chunk) = item, chunk.count == Self.replyLength { chunks += 1 }
            }
            return chunks
        }
        try await served
        #expect(received == Self.replies)
    }

    /// The linger's 2 s start at the half-closure, not when the last writes begin to flush: a
    /// peer that reads late still gets everything. Six megabytes in one write are more than the
    /// two sockets' buffers hold, so most of them wait in NIO until the peer reads, 2.5 s later.
    /// The flush is given 30 s here, so that only the linger's start decides, not how fast a
    /// debug build on a busy 2-core machine reads six megabytes. The peer is raw NIO counting
    /// bytes, for the same reason: decoding each chunk through a link is slower still.
    @Test("a peer that starts reading late still gets every last write")
    func lateReaderGetsEverything() async throws {
        let chunks = 6000
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default, flushTimeout: .seconds(30))
        let port = try #require(listener.channel.localAddress?.port)
        async let served: Void = Self.serveFirst(listener, peer: "the iPhone") {
            (0..<chunks).map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: Self.replyLength) }
        }
        let peer = try await Self.rawPeer(port: port, reads: false)
        defer { peer.close(promise: nil) }
        try await Task.sleep(for: .milliseconds(2500))
        let counter = ByteCounter()
        try await peer.pipeline.addHandler(counter).get()
        try await peer.setOption(.autoRead, value: true).get()
        try await peer.closeFuture.get()
        try await served
        #expect(counter.total.withLock { $0 } == chunks * (2 + Self.replyLength), "every chunk with its two-byte length")
    }

    /// A peer that neither reads nor closes cannot hold the connection open: the wait after the
    /// half-closure is bounded.
    @Test("a peer that never closes its side is closed on after the linger timeout")
    func silentPeerBounded() async throws {
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        // Keeps its side open after the accessory's half-closure.
        let peer = try await Self.rawPeer(port: port, reads: true)
        defer { peer.close(promise: nil) }
        let started = ContinuousClock.now
        try await Self.serveFirst(listener, peer: "a silent peer") { [] }
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(1), "it waited for the peer before closing (\(waited))")
    }

    /// A peer that reads nothing cannot hold the link open either: the flush is bounded too, by
    /// `TCPLink.flushTimeout`, which counts from the link's end: six megabytes sit unflushed.
    @Test("a peer that never reads is closed on after the flush timeout")
    func nonReaderBounded() async throws {
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        let peer = try await Self.rawPeer(port: port, reads: false)
        defer { peer.close(promise: nil) }
        let started = ContinuousClock.now
        try await Self.serveFirst(listener, peer: "a peer that never reads") {
            (0..<6000).map { _ in [UInt8](repeating: 1, count: Self.replyLength) }
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(4) && waited < .seconds(30), "it gave the flush its time, and no more, before closing (\(waited))")
    }
}

/// Counts what a raw peer receives, and closes its side once the other side has closed its own.
private final class ByteCounter: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let total = Mutex(0)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let count = unwrapInboundIn(data).readableBytes
        total.withLock { $0 += count }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }
}
