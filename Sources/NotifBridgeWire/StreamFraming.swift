/// How a byte stream (the TCP link) carries chunks: each chunk is preceded by its length as a
/// little-endian UInt16 (docs/PROTOCOL.md §3.2). The chunks themselves are exactly the GATT ones,
/// so one `ChunkReassembler` serves both links.
public enum StreamFraming {
    public static let lengthPrefixLength = 2

    /// Appends one length-prefixed chunk to `bytes`.
    public static func append(_ chunk: some Collection<UInt8>, to bytes: inout [UInt8]) {
        precondition(chunk.count <= Int(UInt16.max), "chunk longer than a stream frame can carry")
        bytes.append(UInt8(truncatingIfNeeded: chunk.count))
        bytes.append(UInt8(truncatingIfNeeded: chunk.count >> 8))
        bytes.append(contentsOf: chunk)
    }

    /// Checks a frame's declared chunk length before any of the chunk is buffered.
    public static func validate(declaredLength: Int, limits: WireLimits) throws(WireError) {
        guard declaredLength > 0 else {
            throw WireError(.malformedChunk, "stream frame declares an empty chunk")
        }
        guard declaredLength <= limits.maxChunkLength else {
            throw WireError(.tooLarge, "stream frame declares a \(declaredLength)-byte chunk; maxChunkLength is \(limits.maxChunkLength)")
        }
    }
}

/// Incremental decoder for `StreamFraming`, for byte streams that arrive in arbitrary pieces.
public struct StreamFrameDecoder: Sendable {
    public let limits: WireLimits
    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init(limits: WireLimits = .default) {
        self.limits = limits
    }

    /// Appends received bytes and returns every chunk now complete. A frame over the limit throws;
    /// the stream cannot be resynchronised after that, so the caller closes the connection.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(WireError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var chunks: [[UInt8]] = []
        while buffer.count - readIndex >= StreamFraming.lengthPrefixLength {
            let length = Int(buffer[readIndex]) | Int(buffer[readIndex + 1]) << 8
            try StreamFraming.validate(declaredLength: length, limits: limits)
            let start = readIndex + StreamFraming.lengthPrefixLength
            guard buffer.count - start >= length else { break }
            chunks.append(Array(buffer[start..<start + length]))
            readIndex = start + length
        }
        if readIndex > 0 && readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 4096 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        return chunks
    }
}
