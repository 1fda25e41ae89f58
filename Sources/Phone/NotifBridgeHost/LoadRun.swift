import Foundation
import NotifBridgeHostCore
import Synchronization

/// Forwards `count` notifications at `rate` per second (0: as fast as the link takes them) and
/// measures, per notification, the time from handing it to the link to its receipt.
public struct LoadRun: Sendable {
    public var count: Int
    /// Notifications per second; 0 sends without pacing.
    public var rate: Double
    /// Notifications sent back to back at each due time (the average rate stays `rate`): a
    /// backlog flushed after a reconnect, or a benchmark of what a wake-up shared by several
    /// notifications costs the accessory.
    public var group: Int
    /// How long to wait for the last receipts once everything is sent.
    public var drainTimeout: Duration

    public init(count: Int, rate: Double, group: Int = 1, drainTimeout: Duration = .seconds(30)) {
        precondition(group >= 1, "a group holds at least one notification")
        self.count = count
        self.rate = rate
        self.group = group
        self.drainTimeout = drainTimeout
    }

    /// When notification `index` (1-based) is due, from the start of the run: each group's
    /// notifications share the due time of its first, so the average rate stays `rate`.
    public func due(index: Int) -> Duration {
        guard rate > 0 else { return .zero }
        return .seconds(Double((index - 1) / group * group) / rate)
    }

    public struct Summary: Sendable, CustomStringConvertible {
        public var sent: Int
        public var acknowledged: Int
        public var alerted: Int
        public var failed: Int
        public var elapsed: Duration
        /// Send → receipt, sorted ascending.
        public var latencies: [Duration]
        /// The link ended before the run did; the notifications not sent count as failed.
        public var linkEnded = false

        public var throughput: Double { Double(acknowledged) / max(elapsed.seconds, 1e-9) }

        public func percentile(_ p: Double) -> Duration? {
            latencies.isEmpty ? nil : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }

        public var description: String {
            func ms(_ d: Duration?) -> String { d.map { String(format: "%.2f ms", $0.seconds * 1000) } ?? "–" }
            return """
                \(sent) sent, \(acknowledged) acknowledged, \(failed) failed, \(alerted) alerted in \(String(format: "%.2f", elapsed.seconds)) s \
                (\(String(format: "%.0f", throughput)) notifications/s)\(linkEnded ? "; the link ended, so the run stopped" : "")
                latency send → receipt: p50 \(ms(percentile(0.5))), p90 \(ms(percentile(0.9))), p99 \(ms(percentile(0.99))), max \(ms(latencies.last))
                """
        }
    }

    /// Runs over an established connection. `make` builds notification `index` (1-based).
    public func run(over connection: HostClient, make: @Sendable (Int) -> HostOperation) async throws -> Summary {
        let clock = ContinuousClock()
        let start = clock.now
        var sentAt: [UInt64: ContinuousClock.Instant] = [:]
        sentAt.reserveCapacity(count)
        let receipts = connection.receiptTimes()
        // A link that ends stops the run: what is sent after it could never be acknowledged,
        // and nothing more will arrive to wait for.
        for index in 1...max(count, 1) where count > 0 {
            if receipts.isClosed { break }
            if rate > 0, case let due = start + due(index: index), due > clock.now {
                try await Task.sleep(until: due, clock: clock)
            } else {
                // Behind schedule (or unpaced), `send` never suspends: a turn given up here lets
                // the receipt reader and the writer run beside this loop (unpaced release runs
                // acknowledged 12,500–13,400/s with it against 11,600/s without).
                await Task.yield()
            }
            let now = clock.now
            sentAt[try connection.send(make(index))] = now
        }
        let deadline = clock.now + drainTimeout
        while receipts.count() < sentAt.count, clock.now < deadline, !receipts.isClosed {
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = clock.now - start
        let recorded = receipts.snapshot()
        let latencies = recorded.compactMap { sequence, receipt in sentAt[sequence].map { receipt.at - $0 } }.sorted()
        return Summary(
            sent: sentAt.count,
            acknowledged: recorded.count,
            alerted: recorded.values.filter(\.alerted).count,
            failed: count - recorded.count,
            elapsed: elapsed,
            latencies: latencies,
            linkEnded: receipts.isClosed
        )
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
