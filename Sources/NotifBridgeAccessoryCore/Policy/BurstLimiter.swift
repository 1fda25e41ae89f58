/// Keeps a flood of notifications (a reconnect, a busy group chat) from buzzing the accessory
/// hundreds of times: at most `maxAlerts` alerts in any `window`, the summary alert included.
/// Notifications past the limit are stored and listed, and counted into one summary alert that
/// goes out as soon as the window has room again. Time is an input.
public struct BurstLimiter: Sendable {
    public struct Limit: Codable, Sendable, Hashable {
        public var maxAlerts: Int
        public var windowSeconds: Double

        public init(maxAlerts: Int = 8, windowSeconds: Double = 60) {
            self.maxAlerts = maxAlerts
            self.windowSeconds = windowSeconds
        }

        /// Keys left out of the policy file keep their defaults.
        public init(from decoder: any Swift.Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Limit()
            maxAlerts = try container.decodeIfPresent(Int.self, forKey: .maxAlerts) ?? defaults.maxAlerts
            windowSeconds = try container.decodeIfPresent(Double.self, forKey: .windowSeconds) ?? defaults.windowSeconds
        }

        /// The longest window: a day. A policy file asks for more only by mistake, and a window
        /// of about 10^16 seconds no longer fits the `Duration` it becomes.
        public static let maxWindowSeconds = 86_400.0

        /// Whether a policy may set these values: at least one alert, a window above zero and at
        /// most `maxWindowSeconds`.
        public var isValid: Bool {
            maxAlerts >= 1 && windowSeconds > 0 && windowSeconds <= Self.maxWindowSeconds
        }

        var window: Duration { .milliseconds(Int64(windowSeconds * 1000)) }
    }

    public let limit: Limit
    private var recent: [ContinuousClock.Instant] = []
    public private(set) var pendingSummary = 0

    public init(limit: Limit) {
        precondition(limit.isValid, "a burst limit needs maxAlerts >= 1 and windowSeconds in (0, \(Limit.maxWindowSeconds)]")
        self.limit = limit
    }

    /// Whether a notification that wants to alert may alert now.
    public mutating func admit(now: ContinuousClock.Instant) -> Bool {
        prune(now)
        guard pendingSummary == 0, recent.count < limit.maxAlerts else {
            pendingSummary += 1
            return false
        }
        recent.append(now)
        return true
    }

    /// The number of held-back notifications to announce in one summary alert, once the window
    /// has room; nil when there is nothing to announce yet.
    public mutating func summaryDue(now: ContinuousClock.Instant) -> Int? {
        prune(now)
        guard pendingSummary > 0, recent.count < limit.maxAlerts else { return nil }
        recent.append(now)
        defer { pendingSummary = 0 }
        return pendingSummary
    }

    private mutating func prune(_ now: ContinuousClock.Instant) {
        recent.removeAll { now - $0 >= limit.window }
    }
}
