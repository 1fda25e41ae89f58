import NIOCore

/// Splits a byte stream into lines, refusing any line over `maxLength` before buffering more
/// of it. Each line is judged on its own, so a long reply of many lines is fine. (NIOExtras'
/// `LineBasedFrameDecoder` buffers a line of any length until its newline, so a client could
/// grow the daemon's memory without bound.)
public struct ControlLineDecoder: ByteToMessageDecoder {
    public typealias InboundOut = Result<String, ControlLineTooLong>
    public let maxLength: Int
    /// What a line is, for the error: "control request" or "control reply line".
    public let what: String
    /// Bytes of an overlong line still to skip, up to and including its newline.
    private var skipping = false

    public init(maxLength: Int = maxControlLineLength, what: String = "control request") {
        self.maxLength = maxLength
        self.what = what
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maxLength {
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                if !skipping { context.fireChannelRead(wrapInboundOut(.failure(tooLong))) }
                skipping = true
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        let line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if skipping {
            skipping = false
        } else {
            context.fireChannelRead(wrapInboundOut(length > maxLength ? .failure(tooLong) : .success(line)))
        }
        return .continue
    }

    private var tooLong: ControlLineTooLong { ControlLineTooLong(what: what, limit: maxLength) }
}

public struct ControlLineTooLong: Error, CustomStringConvertible {
    public var what: String
    public var limit: Int
    public var description: String { "\(what) longer than \(limit) bytes" }
}

/// Appends a newline to each outbound line.
public struct ControlLineEncoder: MessageToByteEncoder {
    public typealias OutboundIn = String
    public init() {}
    public func encode(data: String, out: inout ByteBuffer) throws {
        out.writeString(data)
        out.writeInteger(UInt8(ascii: "\n"))
    }
}
