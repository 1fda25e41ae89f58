import NIOCore
import NotifBridgeWire

/// Splits the byte stream into chunks (docs/PROTOCOL.md §3.2), checking each declared length
/// against `WireLimits.maxChunkLength` before waiting for, or buffering, the chunk's bytes.
struct ChunkStreamDecoder: ByteToMessageDecoder {
    /// A chunk, or `.invalid` once a frame header is over the limits: a byte stream cannot be
    /// resynchronised after that, so nothing after it is decoded.
    typealias InboundOut = LinkInbound

    let limits: WireLimits
    private var failed = false

    init(limits: WireLimits) {
        self.limits = limits
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if failed {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .little, as: UInt16.self) else {
            return .needMoreData
        }
        do {
            try StreamFraming.validate(declaredLength: Int(length), limits: limits)
        } catch {
            failed = true
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            context.fireChannelRead(wrapInboundOut(.invalid(error)))
            return .needMoreData
        }
        guard buffer.readableBytes >= StreamFraming.lengthPrefixLength + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: StreamFraming.lengthPrefixLength)
        let chunk = buffer.readBytes(length: Int(length)) ?? []
        context.fireChannelRead(wrapInboundOut(.chunk(chunk)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A partial frame at EOF is dropped: the reassembler never sees half a chunk.
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}

/// Prefixes each outbound chunk with its length.
struct ChunkStreamEncoder: MessageToByteEncoder {
    typealias OutboundIn = [UInt8]

    func encode(data: [UInt8], out: inout ByteBuffer) throws {
        out.writeInteger(UInt16(data.count), endianness: .little)
        out.writeBytes(data)
    }
}
