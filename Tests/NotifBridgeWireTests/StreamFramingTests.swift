import Foundation
import NotifBridgeTestSupport
import NotifBridgeVectors
import NotifBridgeWire
import Testing

@Suite("TCP stream framing")
struct StreamFramingTests {
    @Test("Byte-at-a-time and all-at-once give the same chunks")
    func dripFed() throws {
        let chunks: [[UInt8]] = [[1], Array(repeating: 7, count: 300), [0, 1, 2, 3]]
        var stream: [UInt8] = []
        for chunk in chunks { StreamFraming.append(chunk, to: &stream) }

        var whole = StreamFrameDecoder()
        #expect(try whole.feed(stream) == chunks)

        var drip = StreamFrameDecoder()
        var collected: [[UInt8]] = []
        for byte in stream { collected += try drip.feed([byte]) }
        #expect(collected == chunks)
    }

    @Test("Declared chunk length: the limit is accepted, one more is refused before buffering")
    func lengthBoundary() throws {
        let limits = WireLimits(maxChunkLength: 100)
        var ok = StreamFrameDecoder(limits: limits)
        var stream: [UInt8] = []
        StreamFraming.append(Array(repeating: 1, count: 100), to: &stream)
        #expect(try ok.feed(stream).count == 1)

        var refused = StreamFrameDecoder(limits: limits)
        // Only the two length bytes of a 101-byte frame: refused without waiting for the body.
        #expect(throws: WireError(.tooLarge, "")) { try refused.feed([101, 0]) }
    }

    @Test("An empty frame is malformed")
    func emptyFrame() {
        var decoder = StreamFrameDecoder()
        #expect(throws: WireError(.malformedChunk, "")) { try decoder.feed([0, 0]) }
    }
}

@Suite("Golden framing vectors")
struct FramingVectorTests {
    @Test("The framer produces the recorded chunks and the reassembler restores the message")
    func vectors() throws {
        let file = try GoldenVectors.load(from: TestVectors.directory.appendingPathComponent("golden-v1.json"))
        #expect(file.framing.count >= 5)
        for vector in file.framing {
            var framer = ChunkFramer(chunkLength: vector.chunkLength)
            let message = [UInt8](Data(hex: vector.message))
            #expect(framer.frame(message).map { Data($0).hex } == vector.chunks)
            var reassembler = ChunkReassembler()
            let restored = try vector.chunks.compactMap { try reassembler.receive([UInt8](Data(hex: $0)), now: .now) }
            #expect(restored == [message])
        }
    }
}
