import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("Chunk reassembly")
struct ChunkReassemblerTests {
    let t0 = ContinuousClock.now

    private func message(_ length: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
    }

    private func reassemble(_ chunks: [[UInt8]], limits: WireLimits = .default) throws -> [[UInt8]] {
        var reassembler = ChunkReassembler(limits: limits)
        return try chunks.compactMap { try reassembler.receive($0, now: t0) }
    }

    @Test("Round trip at every chunk length from the minimum", arguments: [20, 21, 23, 64, 182, 512, 4096])
    func roundTrip(chunkLength: Int) throws {
        for length in [0, 1, 17, 18, 19, 20, 100, 1000, 5000] {
            var framer = ChunkFramer(chunkLength: chunkLength)
            let chunks = framer.frame(message(length))
            #expect(chunks.allSatisfy { $0.count <= chunkLength })
            #expect(try reassemble(chunks) == [message(length)])
        }
    }

    @Test("Drip-fed: one minimum-size chunk at a time, with the result only on the last")
    func dripFed() throws {
        var framer = ChunkFramer(chunkLength: WireLimits.minChunkLength)
        let payload = message(3000)
        let chunks = framer.frame(payload)
        var reassembler = ChunkReassembler()
        for chunk in chunks.dropLast() {
            #expect(try reassembler.receive(chunk, now: t0) == nil)
        }
        #expect(try reassembler.receive(chunks.last!, now: t0) == payload)
        #expect(reassembler.partialMessageCount == 0)
        #expect(reassembler.bufferedByteCount == 0)
    }

    @Test("Interleaved messages (seeded shuffles that keep each message's order)", arguments: [1, 2, 3, 42, 1234] as [UInt64])
    func interleaved(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var framer = ChunkFramer(chunkLength: 32)
        let messages = (0..<4).map { message(200 + $0 * 37, seed: UInt8($0)) }
        var queues = messages.map { framer.frame($0) }
        var order: [[UInt8]] = []
        while queues.contains(where: { !$0.isEmpty }) {
            let candidates = queues.indices.filter { !queues[$0].isEmpty }
            let pick = candidates.randomElement(using: &generator)!
            order.append(queues[pick].removeFirst())
        }
        let received = try reassemble(order)
        #expect(Set(received) == Set(messages))
        #expect(received.count == messages.count)
    }

    @Test("maxMessageLength: the limit is accepted, one more is refused before buffering")
    func messageLengthBoundary() throws {
        let limits = WireLimits(maxMessageLength: 1000, maxBufferedBytes: 4000)
        var framer = ChunkFramer(chunkLength: 100)
        #expect(try reassemble(framer.frame(message(1000)), limits: limits) == [message(1000)])

        var reassembler = ChunkReassembler(limits: limits)
        let oversized = framer.frame(message(1001))
        #expect(throws: WireError(.tooLarge, "")) { try reassembler.receive(oversized[0], now: t0) }
        #expect(reassembler.bufferedByteCount == 0)
        // The rest of the refused message is refused too, and then the link carries on.
        #expect(throws: WireError(.unknownMessageID, "")) { try reassembler.receive(oversized[1], now: t0) }
        let next = framer.frame(message(10))
        #expect(try reassembler.receive(next[0], now: t0) == message(10))
    }

    @Test("maxMessageLength applies to single-chunk messages too")
    func singleChunkLimit() throws {
        let limits = WireLimits(maxMessageLength: 50)
        var framer = ChunkFramer(chunkLength: 200)
        #expect(try reassemble(framer.frame(message(50)), limits: limits) == [message(50)])
        #expect(throws: WireError(.tooLarge, "")) { try reassemble(framer.frame(message(51)), limits: limits) }
    }

    @Test("maxChunkLength: the limit is accepted, one more is refused")
    func chunkLengthBoundary() throws {
        let limits = WireLimits(maxChunkLength: 64)
        var framer = ChunkFramer(chunkLength: 64)
        #expect(try reassemble(framer.frame(message(62)), limits: limits) == [message(62)])
        var wide = ChunkFramer(chunkLength: 65)
        #expect(throws: WireError(.tooLarge, "")) { try reassemble(wide.frame(message(63)), limits: limits) }
    }

    @Test("maxPartialMessages: four in flight are fine, a fifth is refused and the four complete")
    func partialMessageBoundary() throws {
        var framer = ChunkFramer(chunkLength: 40)
        let messages = (0..<5).map { message(100, seed: UInt8($0)) }
        let framed = messages.map { framer.frame($0) }
        var reassembler = ChunkReassembler()
        for chunks in framed.prefix(4) { #expect(try reassembler.receive(chunks[0], now: t0) == nil) }
        #expect(reassembler.partialMessageCount == 4)
        #expect(throws: WireError(.tooManyPartialMessages, "")) { try reassembler.receive(framed[4][0], now: t0) }
        for (index, chunks) in framed.prefix(4).enumerated() {
            var completed: [UInt8]?
            for chunk in chunks.dropFirst() { completed = try reassembler.receive(chunk, now: t0) }
            #expect(completed == messages[index])
        }
    }

    @Test("maxBufferedBytes: reserving exactly the limit is fine, one byte more is refused")
    func bufferedBytesBoundary() throws {
        let limits = WireLimits(maxMessageLength: 1000, maxBufferedBytes: 1500)
        var framer = ChunkFramer(chunkLength: 100)
        var reassembler = ChunkReassembler(limits: limits)
        #expect(try reassembler.receive(framer.frame(message(1000))[0], now: t0) == nil)
        #expect(try reassembler.receive(framer.frame(message(500))[0], now: t0) == nil)
        #expect(reassembler.bufferedByteCount == 1500)

        var second = ChunkReassembler(limits: limits)
        #expect(try second.receive(framer.frame(message(1000))[0], now: t0) == nil)
        #expect(throws: WireError(.tooManyPartialMessages, "")) { try second.receive(framer.frame(message(501))[0], now: t0) }
        #expect(second.bufferedByteCount == 1000)
    }

    @Test("Partial timeout: idle for exactly the timeout survives, a moment longer is dropped")
    func timeoutBoundary() throws {
        let limits = WireLimits(partialMessageTimeout: .seconds(10))
        var framer = ChunkFramer(chunkLength: 40)
        let chunks = framer.frame(message(100))

        var kept = ChunkReassembler(limits: limits)
        _ = try kept.receive(chunks[0], now: t0)
        #expect(kept.expire(now: t0 + .seconds(10)).isEmpty)
        var completed: [UInt8]?
        for chunk in chunks.dropFirst() { completed = try kept.receive(chunk, now: t0 + .seconds(10)) }
        #expect(completed == message(100))

        var dropped = ChunkReassembler(limits: limits)
        _ = try dropped.receive(chunks[0], now: t0)
        #expect(dropped.expire(now: t0 + .seconds(10) + .nanoseconds(1)) == [chunks[0][1]])
        #expect(dropped.bufferedByteCount == 0)
        #expect(throws: WireError(.unknownMessageID, "")) { try dropped.receive(chunks[1], now: t0 + .seconds(11)) }
    }

    @Test("Chunks that add up to more or less than declared are refused")
    func lengthMismatch() throws {
        var framer = ChunkFramer(chunkLength: 40)
        var chunks = framer.frame(message(100))
        var short = chunks
        short[short.count - 1].removeLast()
        #expect(throws: WireError(.lengthMismatch, "")) { try reassemble(short) }
        chunks[1][0] |= ChunkHeader.Flags.last.rawValue  // a middle chunk claims to be last
        #expect(throws: WireError(.lengthMismatch, "")) { try reassemble(chunks) }
    }

    @Test("Malformed headers are refused", arguments: [[], [0x03], [0x80, 0x00, 0x41], [0x01, 0x00, 0x10, 0x00]] as [[UInt8]])
    func malformedHeader(chunk: [UInt8]) {
        var reassembler = ChunkReassembler()
        #expect(throws: WireError(.malformedChunk, "")) { try reassembler.receive(chunk, now: t0) }
    }

    @Test("A restarted message id drops the earlier partial and keeps the new message")
    func restartedID() throws {
        var reassembler = ChunkReassembler()
        var framer = ChunkFramer(chunkLength: 40)
        let first = framer.frame(message(100))
        _ = try reassembler.receive(first[0], now: t0)
        var replacement = ChunkHeader(flags: [.first, .last], messageID: first[0][1]).encoded()
        replacement += [9, 9, 9]
        #expect(try reassembler.receive(replacement, now: t0) == [9, 9, 9])
        #expect(reassembler.interruptedMessageCount == 1)
        #expect(reassembler.bufferedByteCount == 0)
    }
}

extension ChunkHeader {
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return bytes
    }
}
