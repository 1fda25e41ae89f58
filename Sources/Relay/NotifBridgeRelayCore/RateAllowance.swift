/// How often one accessory may do something at the relay (docs/PROTOCOL.md §11.4): `burst` at
/// once, then one more each `interval`.
public struct RateLimit: Sendable, Hashable {
    public var burst: Int
    public var interval: Duration

    public init(burst: Int, interval: Duration) {
        precondition(burst >= 1 && interval > .zero, "a rate lets at least one through, and refills")
        self.burst = burst
        self.interval = interval
    }

    /// Pushes through APNs. A person's replies and actions come a few at a time; an inbox token
    /// that pushes without end would spend the relay operator's standing with APNs, which every
    /// accessory on the relay shares.
    public static let pushes = RateLimit(burst: 20, interval: .seconds(3))

    /// Posts. A phone forwards a person's notifications, and after a spell offline the ones it
    /// held back; a post token that posts without end (its accessory acknowledging, so no queue
    /// fills) would take the relay's disk and CPU from every other accessory.
    public static let posts = RateLimit(burst: 1_000, interval: .milliseconds(50))
}

/// A token bucket per accessory, for ``RateLimit``. Pure: time is an input.
///
/// A bucket that has filled up again is the same as none: full buckets are dropped whenever the
/// table has doubled since the last time, so it holds at most twice the accessories that went
/// within the last `burst` intervals (and at least room for `minimumTable`).
public struct RateAllowance: Sendable {
    public let rate: RateLimit

    private struct Bucket: Sendable {
        var tokens: Int
        /// When `tokens` was last counted; time since then refills it.
        var countedAt: ContinuousClock.Instant
    }

    private var buckets: [String: Bucket] = [:]
    /// The table's size at which full buckets are next dropped.
    private var pruneAt = Self.minimumTable
    static let minimumTable = 64

    public init(rate: RateLimit) {
        self.rate = rate
    }

    /// Whether `accessory` may go now; if so, it is counted.
    public mutating func take(for accessory: String, now: ContinuousClock.Instant) -> Bool {
        var bucket = refilled(buckets[accessory], now: now)
        guard bucket.tokens > 0 else {
            buckets[accessory] = bucket
            return false
        }
        bucket.tokens -= 1
        buckets[accessory] = bucket
        if buckets.count >= pruneAt {
            buckets = buckets.compactMapValues { bucket in
                let refilled = refilled(bucket, now: now)
                return refilled.tokens < rate.burst ? refilled : nil
            }
            pruneAt = max(Self.minimumTable, 2 * buckets.count)
        }
        return true
    }

    /// How long until `accessory` may go again: zero when it may now. Counts nothing.
    public func wait(for accessory: String, now: ContinuousClock.Instant) -> Duration {
        let bucket = refilled(buckets[accessory], now: now)
        guard bucket.tokens == 0 else { return .zero }
        return rate.interval - (now - bucket.countedAt)
    }

    /// `wait(for:now:)` in whole seconds, rounded up and at least 1: what an HTTP `Retry-After`
    /// says to a refused accessory.
    public func retryAfterSeconds(for accessory: String, now: ContinuousClock.Instant) -> Int {
        let (seconds, attoseconds) = wait(for: accessory, now: now).components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// Accessories with a bucket in the table, full or not.
    public var trackedAccessories: Int { buckets.count }

    /// `bucket` with the whole intervals since it was counted added, at most to `burst`; the
    /// part of an interval left over counts toward the next token.
    private func refilled(_ bucket: Bucket?, now: ContinuousClock.Instant) -> Bucket {
        guard var bucket else { return Bucket(tokens: rate.burst, countedAt: now) }
        let elapsed = now - bucket.countedAt
        guard elapsed >= rate.interval else { return bucket }
        // Capped before the conversion: a long wait over a tiny interval is past `Int`.
        let intervals = Int(min((elapsed / rate.interval).rounded(.down), Double(rate.burst)))
        if intervals >= rate.burst - bucket.tokens {
            return Bucket(tokens: rate.burst, countedAt: now)
        }
        bucket.tokens += intervals
        bucket.countedAt += rate.interval * intervals
        return bucket
    }
}
