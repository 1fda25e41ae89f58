import Logging
import NIOCore
import NIOPosix
import NotifBridgeRelayClient
import NotifBridgeTestSupport
import Synchronization
import Testing

/// A peer that takes the inbox's TCP connection and never answers the WebSocket upgrade (an
/// unrelated service on the relay's port, or a relay that hangs): the client gives the attempt
/// up after its handshake timeout, closes the socket, and stops at once when cancelled.
@Suite("Relay inbox client: a silent peer")
struct RelayHandshakeTests {
    /// Counts the connections the silent peer has taken and how many of them are still open.
    final class SilentPeer: Sendable {
        final class Counts: Sendable {
            let accepted = Mutex(0)
            let open = Mutex(0)
        }
        let counts = Counts()
        let channel: any Channel

        init() async throws {
            let counts = counts
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { child in
                    counts.accepted.withLock { $0 += 1 }
                    counts.open.withLock { $0 += 1 }
                    child.closeFuture.whenComplete { _ in counts.open.withLock { $0 -= 1 } }
                    return child.eventLoop.makeSucceededVoidFuture()
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }

        var accepted: Int { counts.accepted.withLock { $0 } }
        var open: Int { counts.open.withLock { $0 } }

        var url: String { "ws://127.0.0.1:\(channel.localAddress!.port!)" }
    }

    static func client(_ url: String, handshakeTimeout: Duration) -> RelayInboxClient {
        RelayInboxClient(
            configuration: .init(
                relay: url, accessoryID: "watch-1", token: "token", minRetryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(10),
                handshakeTimeout: handshakeTimeout
            ),
            logger: Logger(label: "inbox-client", factory: { _ in SwiftLogNoOpLogHandler() })
        )
    }

    @Test("an unanswered handshake ends after the timeout, its socket closed, and the client tries again", .timeLimit(.minutes(1)))
    func handshakeTimesOut() async throws {
        let peer = try await SilentPeer()
        defer { peer.channel.close(promise: nil) }
        let (reasons, continuation) = AsyncStream<String>.makeStream()
        let running = Task {
            await Self.client(peer.url, handshakeTimeout: .milliseconds(200)).run(onEvent: { event in
                if case .disconnected(let reason, _) = event { continuation.yield(reason) }
            }) { _, _ in Issue.record("received from a silent peer") }
        }
        var seen: [String] = []
        for await reason in reasons {
            seen.append(reason)
            if seen.count == 3 { break }
        }
        running.cancel()
        await running.value
        #expect(seen.allSatisfy { $0.contains("the relay did not open the inbox within 0.2 seconds") }, "\(seen)")
        // The kernel completes each connection before the peer's loop accepts it; under load that
        // accept can come after the client gave the attempt up, so wait for it.
        try await TestWait.until("the peer took three connections") { peer.accepted >= 3 }
        // Each attempt given up closed its socket: at most the one cancelled just now is still
        // closing, none is left behind per attempt.
        try await TestWait.until("the peer's sockets closed") { peer.open == 0 }
    }

    @Test("cancelled while the peer is silent, the client stops at once and closes the socket", .timeLimit(.minutes(1)))
    func cancelDuringHandshake() async throws {
        let peer = try await SilentPeer()
        defer { peer.channel.close(promise: nil) }
        let running = Task {
            await Self.client(peer.url, handshakeTimeout: .seconds(3600)).run { _, _ in Issue.record("received from a silent peer") }
        }
        try await TestWait.until("the peer took the connection") { peer.accepted == 1 }
        running.cancel()
        await running.value
        try await TestWait.until("the peer's sockets closed") { peer.open == 0 }
        #expect(peer.accepted == 1)
    }
}
