import NIOCore
import NIOPosix
import NotifBridgeWire

/// One TCP link connection: chunks in, chunks out.
public typealias TCPLinkChannel = NIOAsyncChannel<LinkInbound, [UInt8]>

/// The development link: the same chunks as over GATT, length-prefixed on a TCP stream.
public enum TCPLink {
    /// The port the accessory listens on by default.
    public static let defaultPort = 7420
    /// Chunk length on TCP: large, since a stream has no ATT MTU.
    public static let defaultChunkLength = 4096

    /// Listens on `host:port` (port 0 picks a free one). Bind to loopback unless told otherwise.
    /// - Parameter flushTimeout: how long an ended link's last writes may wait for a slow peer.
    public static func listen(
        host: String,
        port: Int,
        limits: WireLimits,
        flushTimeout: TimeAmount = TCPLink.flushTimeout,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> NIOAsyncChannel<TCPLinkChannel, Never> {
        do {
            return try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                // At the TCP level: `.socketOption(.tcp_nodelay)` set SOL_SOCKET's option 1, which is
                // SO_DEBUG, and only root may set that (every other user's accept failed).
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try wrap(channel, limits: limits, flushTimeout: flushTimeout) }
                }
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ListenFailure(host: host, port: port, reason: "the port is already in use")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ListenFailure(host: host, port: port, reason: socketErrorText(error))
        }
    }

    public struct ListenFailure: Error, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var reason: String
        public var description: String { "cannot listen on \(host):\(port): \(reason)" }
    }

    public static func connect(
        host: String,
        port: Int,
        limits: WireLimits,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> TCPLinkChannel {
        do {
            return try await ClientBootstrap(group: group)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connectTimeout(.seconds(5))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try wrap(channel, limits: limits) }
                }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ConnectFailure(host: host, port: port, reason: socketErrorText(error))
        }
    }

    /// Whether something accepts connections at the address now (after a restart, say). The
    /// connection closes at once, before any chunk is sent.
    public static func isAccepting(host: String, port: Int, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async -> Bool {
        guard let channel = try? await ClientBootstrap(group: group).connectTimeout(.seconds(1)).connect(host: host, port: port).get() else {
            return false
        }
        try? await channel.close()
        return true
    }

    /// No connection could be made; the reason is the socket's.
    public struct ConnectFailure: Error, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var reason: String
        public var description: String { "cannot connect to the accessory at \(host):\(port): \(reason)" }
    }

    private static func wrap(_ channel: any Channel, limits: WireLimits, flushTimeout: TimeAmount = TCPLink.flushTimeout) throws -> TCPLinkChannel {
        try channel.pipeline.syncOperations.addHandler(LingeringCloseHandler(flushTimeout: flushTimeout))
        try addFraming(to: channel, limits: limits)
        // Finishing the writer half-closes the socket once what was written is flushed.
        return try TCPLinkChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }

    /// Adds the link's framing (§3.2) to a channel opened elsewhere: a Unix socket, a TLS stream,
    /// or an `EmbeddedChannel` in a test or a fuzzer. Inbound it reads `LinkInbound`; outbound it
    /// takes chunks (`[UInt8]`). Call it on the channel's event loop.
    public static func addFraming(to channel: any Channel, limits: WireLimits) throws {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ChunkStreamDecoder(limits: limits)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(ChunkStreamEncoder()))
    }

    /// Whether a listen address stays on this machine (then P-256 may be used for development).
    /// The same rule as a connection's `LinkKind`, plus the name `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || LinkKind.tcp(peerAddress: host) == .loopback
    }
}

extension TCPLinkChannel {
    /// Runs `body` with this connection as a `ChunkLink`, the shape both sides drive every
    /// transport through, and ends the connection when `body` returns: gracefully, so that what
    /// it wrote last arrives (its last writes get ``TCPLink/flushTimeout``, then the peer
    /// ``TCPLink/lingerTimeout`` to close), unless it closed the link itself or
    /// threw, which close at once. The link's inbound
    /// stream reads the socket only as fast as it is consumed: a consumer that stops taking
    /// chunks stops NIO reading, and TCP pushes back on the sender.
    /// The link's kind follows the remote address: loopback or the local network.
    public func withChunkLink<T: Sendable>(peer: String, origin: String? = nil, _ body: @Sendable (ChunkLink) async throws -> T) async throws -> T {
        let channel = self.channel
        return try await executeThenClose { inbound, outbound in
            let reader = InboundReader(inbound.makeAsyncIterator())
            let link = ChunkLink(
                peer: peer,
                origin: origin,
                kind: .tcp(peerAddress: channel.remoteAddress?.ipAddress),
                chunkLength: TCPLink.defaultChunkLength,
                inbound: AsyncThrowingStream { try await reader.next() },
                write: { try await outbound.write(contentsOf: $0) },
                close: { channel.close(promise: nil) }
            )
            let result = try await body(link)
            await TCPLink.linger(channel, finishing: outbound)
            return result
        }
    }
}

/// The channel's inbound iterator, pulled by the link's one consumer.
private final class InboundReader: @unchecked Sendable {
    /// Only the link's consumer calls `next()`, one call at a time (AsyncSequence iteration).
    private var iterator: NIOAsyncChannelInboundStream<LinkInbound>.AsyncIterator

    init(_ iterator: NIOAsyncChannelInboundStream<LinkInbound>.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> LinkInbound? {
        try await iterator.next()
    }
}
