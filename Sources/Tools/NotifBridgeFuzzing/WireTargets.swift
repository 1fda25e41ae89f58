import NIOCore
import NIOEmbedded
import NotifBridgeTCP
import NotifBridgeWire

/// The link layer: chunk reassembly and the TCP stream framing, both fed untrusted bytes.
enum WireTargets {
    /// Small limits, so that short inputs reach every one of them.
    static let limits = WireLimits(
        maxMessageLength: 2048,
        maxChunkLength: 256,
        maxPartialMessages: 3,
        maxBufferedBytes: 4096,
        partialMessageTimeout: .seconds(10)
    )

    /// Each record is one chunk. The tag's low nibble lets up to 15 s pass before it (past the
    /// timeout), and its top bit drops everything first, as a disconnect does.
    static func reassembler(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var reassembler = ChunkReassembler(limits: limits)
        var now = ContinuousClock.now
        while let (tag, chunk) = input.record() {
            now += .seconds(Int(tag & 0x0F))
            if tag & 0x80 != 0 { reassembler.reset() }
            if let message = try? reassembler.receive(chunk, now: now) {
                precondition(message.count <= limits.maxMessageLength, "reassembled \(message.count) bytes past maxMessageLength")
            }
            precondition(reassembler.partialMessageCount <= limits.maxPartialMessages, "\(reassembler.partialMessageCount) partial messages")
            precondition((0...limits.maxBufferedBytes).contains(reassembler.bufferedByteCount), "\(reassembler.bufferedByteCount) bytes reserved")
        }
        roundTrip(bytes)
    }

    /// Whatever the framer cuts, at whatever chunk length, reassembles to the same message. The
    /// first 600 bytes are enough to reach every framing case (one chunk, many, an exact fit) at
    /// every chunk length; framing more would only make long inputs slower.
    private static func roundTrip(_ bytes: [UInt8]) {
        let chunkLength = WireLimits.minChunkLength + Int(bytes.first ?? 0) % (limits.maxChunkLength - WireLimits.minChunkLength + 1)
        let message = Array(bytes.prefix(600))
        var framer = ChunkFramer(chunkLength: chunkLength)
        var reassembler = ChunkReassembler(limits: limits)
        let chunks = framer.frame(message)
        let now = ContinuousClock.now
        for (index, chunk) in chunks.enumerated() {
            precondition(chunk.count <= chunkLength, "framed a \(chunk.count)-byte chunk for length \(chunkLength)")
            let result: [UInt8]?
            do {
                result = try reassembler.receive(chunk, now: now)
            } catch {
                preconditionFailure("a framed chunk was refused: \(error)")
            }
            precondition((result != nil) == (index == chunks.count - 1), "message completed at chunk \(index + 1) of \(chunks.count)")
            if let result { precondition(result == message, "reassembled message differs from the framed one") }
        }
    }

    /// Writes the input to the decoder in pieces (each: a size byte, then up to 256 bytes), then
    /// checks what came out against the bytes that went in.
    static func streamDecoder(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        do {
            try TCPLink.addFraming(to: channel, limits: limits)
        } catch {
            preconditionFailure("framing handlers: \(error)")
        }
        var input = FuzzInput(bytes)
        var stream: [UInt8] = []
        var decoded = StreamCheck(limits: limits)
        while let size = input.byte() {
            let piece = input.take(Int(size) + 1)
            stream += piece
            do {
                try channel.writeInbound(channel.allocator.buffer(bytes: piece))
            } catch {
                preconditionFailure("the decoder threw instead of reporting: \(error)")
            }
            while let item = try? channel.readInbound(as: LinkInbound.self) {
                decoded.add(item, stream: stream)
            }
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        decoded.finish(stream: stream)
    }
}

/// What the stream decoder must have done with a stream: every chunk it handed up is the next
/// frame of the stream, a refusal names a frame whose declared length breaks the limits, nothing
/// follows a refusal, and no complete valid frame is left undecoded.
private struct StreamCheck {
    let limits: WireLimits
    /// Stream bytes accounted for by the chunks handed up so far.
    private var consumed = 0
    private var failed = false

    init(limits: WireLimits) {
        self.limits = limits
    }

    mutating func add(_ item: LinkInbound, stream: [UInt8]) {
        precondition(!failed, "the decoder handed something up after refusing the stream")
        switch item {
        case .chunk(let chunk):
            precondition((1...limits.maxChunkLength).contains(chunk.count), "a \(chunk.count)-byte chunk")
            let frame = [UInt8(truncatingIfNeeded: chunk.count), UInt8(truncatingIfNeeded: chunk.count >> 8)] + chunk
            precondition(stream.count >= consumed + frame.count && Array(stream[consumed..<consumed + frame.count]) == frame, "a chunk that is not the stream's next frame")
            consumed += frame.count
        case .invalid:
            let declared = declaredLength(stream)
            precondition(declared.map { $0 == 0 || $0 > limits.maxChunkLength } ?? false, "refused a frame declaring \(declared.map(String.init) ?? "nothing")")
            failed = true
        case .chunkLength:
            preconditionFailure("a byte stream has no ATT MTU to report")
        }
    }

    func finish(stream: [UInt8]) {
        guard !failed, let declared = declaredLength(stream) else { return }
        let valid = (1...limits.maxChunkLength).contains(declared)
        precondition(!valid || stream.count - consumed < StreamFraming.lengthPrefixLength + declared, "a complete frame was left undecoded")
        precondition(valid, "a frame declaring \(declared) bytes was never refused")
    }

    private func declaredLength(_ stream: [UInt8]) -> Int? {
        guard stream.count - consumed >= StreamFraming.lengthPrefixLength else { return nil }
        return Int(stream[consumed]) | Int(stream[consumed + 1]) << 8
    }
}
