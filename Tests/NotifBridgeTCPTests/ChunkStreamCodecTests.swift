import NIOCore
import NIOEmbedded
@testable import NotifBridgeTCP
import NotifBridgeWire
import Testing

/// The TCP link's codec as it runs in the pipeline: the encoder writes length-prefixed chunks,
/// the decoder checks each declared length before buffering.
@Suite("TCP stream framing")
struct ChunkStreamCodecTests {
    /// A channel with the link's decoder and encoder, as `TCPLink` sets it up.
    private func channel(_ limits: WireLimits = .default) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ChunkStreamDecoder(limits: limits)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(ChunkStreamEncoder()))
        return channel
    }

    /// The bytes the encoder puts on the wire for these chunks.
    private func encoded(_ chunks: [[UInt8]]) throws -> [UInt8] {
        let channel = try channel()
        var bytes: [UInt8] = []
        for chunk in chunks {
            try channel.writeOutbound(chunk)
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readBytes(length: buffer.readableBytes) ?? [] }
        }
        _ = try channel.finish()
        return bytes
    }

    /// What the decoder hands up for `stream`, fed in pieces of `pieceLength` bytes.
    private func decoded(_ stream: [UInt8], pieceLength: Int, limits: WireLimits = .default) throws -> [LinkInbound] {
        let channel = try channel(limits)
        var items: [LinkInbound] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + pieceLength, stream.count)
            try channel.writeInbound(channel.allocator.buffer(bytes: stream[offset..<end]))
            while let item = try channel.readInbound(as: LinkInbound.self) { items.append(item) }
            offset = end
        }
        _ = try channel.finish()
        return items
    }

    private func chunksIn(_ items: [LinkInbound]) -> [[UInt8]] {
        items.compactMap { if case .chunk(let chunk) = $0 { chunk } else { nil } }
    }

    private func refusal(_ items: [LinkInbound]) -> WireError? {
        items.lazy.compactMap { if case .invalid(let error) = $0 { error } else { nil } }.first
    }

    @Test("Byte-at-a-time and all-at-once give the same chunks")
    func dripFed() throws {
        let chunks: [[UInt8]] = [[1], Array(repeating: 7, count: 300), [0, 1, 2, 3]]
        let stream = try encoded(chunks)
        #expect(stream.count == chunks.reduce(0) { $0 + StreamFraming.lengthPrefixLength + $1.count })
        #expect(Array(stream.prefix(3)) == [1, 0, 1], "little-endian length, then the chunk")
        #expect(chunksIn(try decoded(stream, pieceLength: stream.count)) == chunks)
        #expect(chunksIn(try decoded(stream, pieceLength: 1)) == chunks)
    }

    @Test("Declared chunk length: the limit is accepted, one more is refused before buffering")
    func lengthBoundary() throws {
        let limits = WireLimits(maxChunkLength: 100)
        let stream = try encoded([Array(repeating: 1, count: 100)])
        let accepted = try decoded(stream, pieceLength: stream.count, limits: limits)
        #expect(chunksIn(accepted).count == 1)
        #expect(refusal(accepted) == nil)

        // Only the two length bytes of a 101-byte frame: refused without waiting for the body.
        #expect(refusal(try decoded([101, 0], pieceLength: 2, limits: limits)) == WireError(.tooLarge, ""))
    }

    @Test("An empty frame is malformed")
    func emptyFrame() throws {
        #expect(refusal(try decoded([0, 0], pieceLength: 2)) == WireError(.malformedChunk, ""))
    }

    @Test("Nothing after a refused frame is decoded")
    func nothingAfterRefusal() throws {
        let good = try encoded([[9, 9]])
        let items = try decoded([0, 0] + good, pieceLength: 1)
        #expect(refusal(items) == WireError(.malformedChunk, ""))
        #expect(chunksIn(items).isEmpty)
    }
}
