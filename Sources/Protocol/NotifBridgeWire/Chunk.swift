/// One chunk of a message: a GATT write value, a GATT notification value, or a TCP frame body.
///
/// Layout (docs/PROTOCOL.md §3.1), all integers little-endian:
///
///     flags(1) ‖ message_id(1) ‖ [total_length(4) if FIRST and not LAST] ‖ payload
///
/// A message that fits one chunk is sent with FIRST|LAST and no length field; its length is the
/// chunk's. Chunks of different message ids may interleave; chunks of one id arrive in order.
public struct ChunkHeader: Hashable, Sendable {
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let first = Flags(rawValue: 1 << 0)
        public static let last = Flags(rawValue: 1 << 1)
        /// Bits 2–7 are reserved and must be zero; a chunk with any of them set is refused.
        static let reserved: UInt8 = 0b1111_1100
    }

    public var flags: Flags
    public var messageID: UInt8
    /// Present only on a FIRST chunk that is not also LAST.
    public var totalLength: UInt32?

    public init(flags: Flags, messageID: UInt8, totalLength: UInt32? = nil) {
        self.flags = flags
        self.messageID = messageID
        self.totalLength = totalLength
    }

    public static let baseLength = 2
    public static let lengthFieldLength = 4

    public var encodedLength: Int { Self.baseLength + (totalLength == nil ? 0 : Self.lengthFieldLength) }

    /// Parses the header at the start of `chunk` and returns it with the payload's start index.
    public static func parse(_ chunk: some RandomAccessCollection<UInt8>) throws(WireError) -> (ChunkHeader, payloadOffset: Int) {
        guard chunk.count >= baseLength else {
            throw WireError(.malformedChunk, "chunk of \(chunk.count) bytes is shorter than the 2-byte header")
        }
        let start = chunk.startIndex
        let rawFlags = chunk[start]
        guard rawFlags & Flags.reserved == 0 else {
            throw WireError(.malformedChunk, "reserved flag bits set (0x\(String(rawFlags, radix: 16)))")
        }
        let flags = Flags(rawValue: rawFlags)
        let messageID = chunk[chunk.index(after: start)]
        guard flags.contains(.first), !flags.contains(.last) else {
            return (ChunkHeader(flags: flags, messageID: messageID), baseLength)
        }
        guard chunk.count >= baseLength + lengthFieldLength else {
            throw WireError(.malformedChunk, "first chunk of \(chunk.count) bytes has no room for the length field")
        }
        var length: UInt32 = 0
        var index = chunk.index(start, offsetBy: baseLength)
        for shift in stride(from: 0, to: 32, by: 8) {
            length |= UInt32(chunk[index]) << UInt32(shift)
            index = chunk.index(after: index)
        }
        return (ChunkHeader(flags: flags, messageID: messageID, totalLength: length), baseLength + lengthFieldLength)
    }

    public func write(into bytes: inout [UInt8]) {
        bytes.append(flags.rawValue)
        bytes.append(messageID)
        if let totalLength {
            for shift in stride(from: 0, to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: totalLength >> UInt32(shift)))
            }
        }
    }
}

/// Splits messages into chunks no longer than the link's chunk length.
public struct ChunkFramer: Sendable {
    public private(set) var chunkLength: Int
    private var nextMessageID: UInt8 = 0

    /// - Parameter chunkLength: the largest chunk the link carries; at least
    ///   `WireLimits.minChunkLength` so a first chunk always has payload room.
    public init(chunkLength: Int) {
        precondition(chunkLength >= WireLimits.minChunkLength, "chunk length below the protocol minimum")
        self.chunkLength = chunkLength
    }

    /// Changes the chunk length for messages framed from now on (e.g. after an MTU exchange).
    public mutating func setChunkLength(_ length: Int) {
        precondition(length >= WireLimits.minChunkLength, "chunk length below the protocol minimum")
        chunkLength = length
    }

    /// Frames one message under the next message id.
    public mutating func frame(_ message: some Collection<UInt8>) -> [[UInt8]] {
        let id = nextMessageID
        nextMessageID &+= 1
        let payload = Array(message)
        if payload.count + ChunkHeader.baseLength <= chunkLength {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(payload.count + ChunkHeader.baseLength)
            ChunkHeader(flags: [.first, .last], messageID: id).write(into: &chunk)
            chunk.append(contentsOf: payload)
            return [chunk]
        }
        var chunks: [[UInt8]] = []
        var offset = 0
        while offset < payload.count {
            let isFirst = offset == 0
            let header = ChunkHeader(
                flags: isFirst ? .first : [],
                messageID: id,
                totalLength: isFirst ? UInt32(payload.count) : nil
            )
            let room = chunkLength - header.encodedLength
            let end = min(offset + room, payload.count)
            var chunk: [UInt8] = []
            chunk.reserveCapacity(header.encodedLength + end - offset)
            var finalHeader = header
            if end == payload.count { finalHeader.flags.insert(.last) }
            finalHeader.write(into: &chunk)
            chunk.append(contentsOf: payload[offset..<end])
            chunks.append(chunk)
            offset = end
        }
        return chunks
    }
}
