import Logging
import NIOCore
import NotifBridgeLogGate
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization

/// Where links come from: the TCP listener, the Bluetooth peripheral. A source hands each link to
/// the daemon with its kind (``LinkKind``), which decides the session's rules for that link.
public protocol LinkSource: Sendable {
    /// Runs until cancelled. Calls `ready` once peers can reach the accessory, with what the
    /// presenter announces, then `serve` for each link, each in a task of its own; `serve`
    /// returns when the daemon is done with the link, and the source then ends it (a TCP link
    /// after its last writes are flushed, a Bluetooth central by disconnecting it).
    func run(ready: @escaping @Sendable (PresenterEvent) -> Void, serve: @escaping @Sendable (ChunkLink) async -> Void) async throws
}

/// Links a transport has already opened, such as the BLE peripheral's centrals, each closed once
/// served: BlueZ keeps a central connected until told, and while one holds the link every other
/// central is refused. A stream that ends by itself (bluetoothd went away) is an error, so a
/// supervisor can start the accessory again.
public struct StreamLinkSource: LinkSource {
    let links: AsyncStream<ChunkLink>
    let announcement: PresenterEvent

    public init(_ links: AsyncStream<ChunkLink>, announcing announcement: PresenterEvent) {
        self.links = links
        self.announcement = announcement
    }

    public func run(ready: @escaping @Sendable (PresenterEvent) -> Void, serve: @escaping @Sendable (ChunkLink) async -> Void) async throws {
        ready(announcement)
        await withDiscardingTaskGroup { group in
            for await link in links {
                group.addTask {
                    await serve(link)
                    link.close()
                }
            }
        }
        try Task.checkCancellation()
        throw TransportEnded()
    }
}

/// The transport stopped handing over links while the daemon was running.
public struct TransportEnded: Error, CustomStringConvertible {
    public var description: String { "the transport ended (for Bluetooth: bluetoothd left the bus, or a system bus connection was lost; the log says which)" }
}

/// The TCP listener: each accepted connection is a link whose kind follows its remote address
/// (loopback or the local network). At most `maxConnections` are served at once; one more is
/// closed at once, with a rationed log line.
struct TCPLinkSource: LinkSource {
    let host: String
    let port: Int
    let limits: WireLimits
    let maxConnections: Int
    let suite: String
    let keyID: @Sendable () -> String
    let gate: LogGate
    let logger: Logger
    let onListening: @Sendable (Int) -> Void
    let open: OpenConnections

    func run(ready: @escaping @Sendable (PresenterEvent) -> Void, serve: @escaping @Sendable (ChunkLink) async -> Void) async throws {
        let server = try await TCPLink.listen(host: host, port: port, limits: limits)
        let bound = server.channel.localAddress?.port ?? port
        logger.info("listening on \(hostAndPort(host, bound))")
        ready(.listening(host: host, port: bound, suite: suite, keyID: keyID()))
        onListening(bound)
        try await withTaskCancellationHandler {
            try await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        let origin = connection.channel.remoteAddress?.ipAddress ?? "unknown"
                        guard open.admit(limit: maxConnections) else {
                            gate.pass(origin) {
                                logger.notice("refused a connection from \(origin): \(maxConnections) connections are open, the most this accessory serves")
                            }
                            // Closed through the async channel, which must finish its writer.
                            group.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        // The connection's tasks run on its socket's event loop, not on whichever
                        // loop a timer or a wake-up lands on: about 9% less CPU at 3,000/s. Its
                        // waits (the commit window, the tick) use that loop's timer too.
                        let eventLoop = connection.channel.eventLoop
                        group.addTask(executorPreference: EventLoopTaskExecutor(eventLoop)) {
                            defer { open.release() }
                            let peer = connection.channel.remoteAddress?.peerLabel ?? "unknown"
                            do {
                                try await connection.withChunkLink(peer: peer, origin: origin) { link in
                                    // Returning ends the link gracefully: the last receipts arrive.
                                    await ConnectionTimer.$eventLoop.withValue(eventLoop) { await serve(link) }
                                }
                            } catch {
                                gate.pass(origin) { logger.notice("connection ended with an error", metadata: ["peer": "\(peer)", "error": "\(error)"]) }
                            }
                        }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }
}

/// Connections accepted and not yet ended, counted before they are served.
final class OpenConnections: Sendable {
    private let count = Atomic<Int>(0)

    var current: Int { count.load(ordering: .relaxed) }

    /// Counts one more in unless `limit` are open.
    func admit(limit: Int) -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = count.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() {
        count.subtract(1, ordering: .relaxed)
    }
}
