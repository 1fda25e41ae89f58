/// Whether a connection's batch of deliveries waits out the commit window for more before it is
/// committed (group commit). Waiting pays when deliveries come close together: those that
/// arrive meanwhile share the batch's transaction and fsync. A delivery that comes alone to a
/// link that was idle for longer than a window since its last commit would wait for company
/// that does not come, so it is committed at once: its receipt is not held back, and the link's
/// loop is not woken once more for the window's timer.
///
/// Pure: the caller passes the times a batch was read and a commit ended.
struct CommitPacing: Sendable {
    let window: Duration
    private var lastCommit: ContinuousClock.Instant?

    init(window: Duration) {
        self.window = window
    }

    /// Whether a batch read at `readAt` that holds `deliveries` waits for more. It waits when it
    /// already holds more than one (a burst is arriving) or came at most a window after the last
    /// commit ended (deliveries are dense enough for the window to catch more).
    func shouldWait(deliveries: Int, readAt: ContinuousClock.Instant) -> Bool {
        guard window > .zero, deliveries > 0 else { return false }
        if deliveries > 1 { return true }
        guard let lastCommit else { return false }
        return readAt - lastCommit <= window
    }

    /// A batch's deliveries were committed at `now`.
    mutating func committed(at now: ContinuousClock.Instant) {
        lastCommit = now
    }
}
