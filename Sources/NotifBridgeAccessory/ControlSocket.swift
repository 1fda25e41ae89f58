import Foundation
import NIOCore
import NIOPosix

/// Splits a byte stream into lines, refusing any line over `maxLineLength`.
/// SPI so the fuzzer can drive it with a small limit; the daemon uses `maxControlLineLength`.
@_spi(Fuzzing) public struct ControlLineDecoder: ByteToMessageDecoder {
    public typealias InboundOut = Result<String, ControlLineTooLong>

    public let maxLineLength: Int

    public init(maxLineLength: Int = maxControlLineLength) {
        self.maxLineLength = maxLineLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maxLineLength {
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                context.fireChannelRead(wrapInboundOut(.failure(ControlLineTooLong(limit: maxLineLength))))
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        let line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(length > maxLineLength ? .failure(ControlLineTooLong(limit: maxLineLength)) : .success(line)))
        return .continue
    }
}

@_spi(Fuzzing) public struct ControlLineTooLong: Error, CustomStringConvertible {
    public var limit: Int
    public var description: String { "control request longer than \(limit) bytes" }
}

/// Appends a newline to each outbound line.
struct ControlLineEncoder: MessageToByteEncoder {
    typealias OutboundIn = String
    func encode(data: String, out: inout ByteBuffer) throws {
        out.writeString(data)
        out.writeInteger(UInt8(ascii: "\n"))
    }
}

typealias ControlChannel = NIOAsyncChannel<Result<String, ControlLineTooLong>, String>

enum ControlSocket {
    struct InUse: Error, CustomStringConvertible {
        var path: String
        var description: String { "another accessory is already running with this state directory (it answers on \(path))" }
    }

    /// Binds the socket, mode 0600. A socket file left by a crashed daemon is replaced; one that
    /// a running daemon still answers on is not.
    static func listen(path: String) async throws -> NIOAsyncChannel<ControlChannel, Never> {
        if FileManager.default.fileExists(atPath: path) {
            let probe = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(unixDomainSocketPath: path).get()
            if let probe {
                try? await probe.close()
                throw InUse(path: path)
            }
        }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture { try wrap(channel) }
            }
        chmod(path, 0o600)
        return server
    }

    static func wrap(_ channel: any Channel) throws -> ControlChannel {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ControlLineDecoder()))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(ControlLineEncoder()))
        return try ControlChannel(wrappingChannelSynchronously: channel)
    }
}

/// Talks to a running accessory's control socket: one request, one reply.
public enum ControlClient {
    public struct Unavailable: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "no accessory is listening on \(path) (\(reason)); is `notifbridge accessory` running with this --state?" }
    }

    public static func send(_ request: ControlRequest, socketPath: String) async throws -> ControlReply {
        let channel: ControlChannel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture { try ControlSocket.wrap(channel) }
                }
        } catch {
            throw Unavailable(path: socketPath, reason: "\(error)")
        }
        let encoder = JSONEncoder()
        let line = String(decoding: try encoder.encode(request), as: UTF8.self)
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(line)
            for try await reply in inbound {
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                return try decoder.decode(ControlReply.self, from: Data(try reply.get().utf8))
            }
            throw Unavailable(path: socketPath, reason: "the accessory closed the connection without replying")
        }
    }
}
