import NotifBridgeWire
import Synchronization

/// The Hello deadline for a connection whose loop cannot judge it. The loop judges it between
/// inputs (`AccessoryConnection.isHelloOverdue`), but a peer that sends no Hello and reads
/// nothing blocks the loop in a write once the answers to its messages fill the socket's
/// buffers. The connection's tick task asks ``isStuck(now:)`` and closes the link.
final class HelloBackstop: Sendable {
    private let deadline: ContinuousClock.Instant
    /// How long one write must have lasted: the loop's own judgement, a tick later, comes first
    /// whenever the loop is free to make it.
    private let stall: Duration
    private let helloSeen = Atomic(false)
    private let writingSince = Mutex<ContinuousClock.Instant?>(nil)

    init(openedAt: ContinuousClock.Instant, helloTimeout: Duration, stall: Duration) {
        deadline = openedAt + helloTimeout
        self.stall = stall
    }

    /// The loop has read a Hello: from then on the peer may stay as long as an iPhone may.
    func sawHello() {
        guard !helloSeen.load(ordering: .relaxed) else { return }
        helloSeen.store(true, ordering: .releasing)
    }

    /// `link`, with each write timed.
    func watching(_ link: ChunkLink) -> ChunkLink {
        var watched = link
        let write = link.write
        watched.write = { [self] chunks in
            if helloSeen.load(ordering: .acquiring) { return try await write(chunks) }
            writingSince.withLock { $0 = .now }
            defer { writingSince.withLock { $0 = nil } }
            try await write(chunks)
        }
        return watched
    }

    /// No Hello by the deadline, and the loop has been in one write for `stall`.
    func isStuck(now: ContinuousClock.Instant) -> Bool {
        guard !helloSeen.load(ordering: .acquiring), now > deadline else { return false }
        return writingSince.withLock { since in since.map { now - $0 >= stall } ?? false }
    }
}
