import Foundation
import NotifBridgeTestSupport
import NotifBridgeVectors
import NotifBridgeWire
import Testing

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
