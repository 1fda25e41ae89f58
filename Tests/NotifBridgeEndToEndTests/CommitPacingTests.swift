@testable import NotifBridgeAccessory
import Testing

/// When a batch of deliveries waits out the commit window, and when it is committed at once.
@Suite("Commit pacing")
struct CommitPacingTests {
    /// A batch: how many deliveries it holds, when it was read and, if it held any, when its
    /// commit ended; times after the connection's first batch.
    struct Batch: CustomTestStringConvertible, Sendable {
        let deliveries: Int
        let read: Duration
        let committed: Duration?
        let waits: Bool
        var testDescription: String { "\(deliveries) read at \(read): \(waits ? "waits" : "at once")" }
    }

    static let window = Duration.milliseconds(3)
    static let ms = Duration.milliseconds

    @Test("Each batch in a sequence waits, or not, as the table says", arguments: [
        ("a lone first delivery is committed at once", [Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false)]),
        ("a first batch of two waits: a burst is arriving", [Batch(deliveries: 2, read: .zero, committed: ms(4), waits: true)]),
        ("one a window after the last commit ended waits", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 1, read: ms(1) + window, committed: nil, waits: true),
        ]),
        ("one a window and a nanosecond after does not", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 1, read: ms(1) + window + .nanoseconds(1), committed: nil, waits: false),
        ]),
        ("at 3,000/s, every batch waits, one of a single delivery too (read just after a commit)", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 3, read: ms(1), committed: ms(5), waits: true),
            Batch(deliveries: 12, read: ms(5), committed: ms(9), waits: true),
            Batch(deliveries: 1, read: ms(9), committed: nil, waits: true),
        ]),
        ("at 500/s (one every 2 ms), a single delivery read 2 ms after a commit waits", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 1, read: ms(2), committed: ms(6), waits: true),
            Batch(deliveries: 1, read: ms(8), committed: nil, waits: true),
        ]),
        ("at 100/s (one every 10 ms) none waits", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 1, read: ms(10), committed: ms(11), waits: false),
            Batch(deliveries: 1, read: ms(20), committed: nil, waits: false),
        ]),
        ("a batch without deliveries (a tick, a reply to send) waits for nothing, even just after a commit, and is not a commit", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 0, read: ms(2), committed: nil, waits: false),
            Batch(deliveries: 0, read: ms(8), committed: nil, waits: false),
            Batch(deliveries: 1, read: ms(10), committed: nil, waits: false),
        ]),
        ("a burst after a quiet spell waits, and the delivery just after its commit too", [
            Batch(deliveries: 1, read: .zero, committed: ms(1), waits: false),
            Batch(deliveries: 5, read: .seconds(60), committed: .seconds(60) + ms(4), waits: true),
            Batch(deliveries: 1, read: .seconds(60) + ms(6), committed: nil, waits: true),
        ]),
    ] as [(String, [Batch])])
    func table(_ name: String, _ batches: [Batch]) {
        let start = ContinuousClock.now
        var pacing = CommitPacing(window: Self.window)
        for batch in batches {
            #expect(pacing.shouldWait(deliveries: batch.deliveries, readAt: start + batch.read) == batch.waits, "\(name): \(batch.testDescription)")
            if let committed = batch.committed { pacing.committed(at: start + committed) }
        }
    }

    @Test("With no commit window nothing waits, however many deliveries a batch holds or however close", arguments: [1, 2, 1_000])
    func noWindow(deliveries: Int) {
        let start = ContinuousClock.now
        var pacing = CommitPacing(window: .zero)
        pacing.committed(at: start)
        #expect(!pacing.shouldWait(deliveries: deliveries, readAt: start))
    }
}
