import Foundation
import NIOCore
import NIOPosix
import NotifBridgeControl
import NotifBridgeTCP
import Synchronization

typealias ControlChannel = NIOAsyncChannel<Result<String, ControlLineTooLong>, String>

enum ControlSocket {
    struct InUse: Error, CustomStringConvertible {
        var path: String
        var description: String { "another accessory is already running with this state directory (it answers on \(path))" }
    }

    struct Unbound: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot open the control socket \(path): \(reason)" }
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
        let server: NIOAsyncChannel<ControlChannel, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                    channel.eventLoop.makeCompletedFuture { try wrap(channel, maxLineLength: maxControlLineLength, what: "control request") }
                }
        } catch is UnixDomainSocketPathWrongType {
            throw Unbound(path: path, reason: "something that is not a socket is at that path; move it away")
        } catch {
            throw Unbound(path: path, reason: socketErrorText(error))
        }
        chmod(path, 0o600)
        return server
    }

    static func wrap(_ channel: any Channel, maxLineLength: Int, what: String) throws -> ControlChannel {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ControlLineDecoder(maxLength: maxLineLength, what: what)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(ControlLineEncoder()))
        return try ControlChannel(wrappingChannelSynchronously: channel)
    }
}

/// Talks to a running accessory's control socket: one request, then its reply lines.
public enum ControlClient {
    public struct Unavailable: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "no accessory is listening on \(path) (\(reason)); is `notifbridge accessory` running with this --state?" }
    }

    /// The socket is there but mode 0600 and someone else's: an accessory may well be running.
    public struct Forbidden: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "not allowed to use the control socket \(path) (Permission denied): only the user the accessory runs as may; run this as that user"
        }
    }

    /// Something took the request and said nothing for `timeout`.
    public struct NoAnswer: Error, CustomStringConvertible {
        public var path: String
        public var timeout: Duration
        public var description: String { "the accessory on \(path) did not answer within \(timeout)" }
    }

    /// How long a reply line may take. An action's reply waits for the link (or the relay and
    /// APNs) to take it, which is seconds; a peer silent for this long will not answer.
    public static let replyTimeout = Duration.seconds(30)

    /// Why connecting failed, for the user: a refused permission is not a missing accessory.
    static func connectFailure(_ error: any Error, path: String) -> any Error {
        let code = (error as? IOError)?.errnoCode ?? ((error as? NIOConnectionError)?.connectionErrors.first?.error as? IOError)?.errnoCode
        if code == EACCES { return Forbidden(path: path) }
        return Unavailable(path: path, reason: socketErrorText(error))
    }

    /// Sends `request` and returns the reply's last line. Each notification of a `list` goes to
    /// `onNotification` as its line arrives, so nothing waits for, or holds, the whole list.
    public static func send(
        _ request: ControlRequest,
        socketPath: String,
        replyTimeout: Duration = ControlClient.replyTimeout,
        onNotification: (ListedNotification) throws -> Void = { _ in }
    ) async throws -> ControlReply {
        // NIO would name only its error type; the accessory refuses such a --state, so none listens.
        guard socketPath.utf8.count <= AccessoryConfiguration.maxSocketPathLength else {
            throw Unavailable(
                path: socketPath,
                reason: "the path is \(socketPath.utf8.count) bytes, and a Unix socket path is at most \(AccessoryConfiguration.maxSocketPathLength)"
            )
        }
        let channel: ControlChannel
        let silence = SilenceCloser()
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: TimeAmount(replyTimeout)))
                        try channel.pipeline.syncOperations.addHandler(silence)
                        return try ControlSocket.wrap(channel, maxLineLength: maxControlReplyLineLength, what: "control reply line")
                    }
                }
        } catch {
            throw connectFailure(error, path: socketPath)
        }
        let line = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        do {
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(line)
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                for try await reply in inbound {
                    let decoded = try decoder.decode(ControlReply.self, from: Data(try reply.get().utf8))
                    guard let notification = decoded.notification else { return decoded }
                    try onNotification(notification)
                }
                throw Unavailable(path: socketPath, reason: "the accessory closed the connection before its reply ended")
            }
        } catch where silence.fired {
            throw NoAnswer(path: socketPath, timeout: replyTimeout)
        }
    }

    /// Closes the channel when `IdleStateHandler` reports no read in time, and remembers it:
    /// the send then fails with whatever the closed channel gives it (the reply's end, or a
    /// request written too late), and all of those mean the peer did not answer.
    private final class SilenceCloser: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        struct Silent: Error {}
        private let silenced = Atomic(false)

        var fired: Bool { silenced.load(ordering: .acquiring) }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
                context.fireUserInboundEventTriggered(event)
                return
            }
            silenced.store(true, ordering: .releasing)
            context.fireErrorCaught(Silent())
            context.close(promise: nil)
        }
    }
}
