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

        /// Never holds anything back: no count of alerts reaches the limit, and a 1 ms window
        /// forgets each alert almost at once, so the state stays small. For previews and tests
        /// that are not about bursts.
        public static let unlimited = Limit(maxAlerts: .max, windowSeconds: 0.001)
    }

    public let limit: Limit
    private var recent: [ContinuousClock.Instant] = []
    public private(set) var pendingSummary = 0

    public init(limit: Limit) {
        precondition(limit.isValid, "a burst limit needs maxAlerts >= 1 and windowSeconds in (0, \(Limit.maxWindowSeconds)]")
        self.limit = limit
    }

    /// How the state moves. ``AlertPlanner`` chooses a step without changing anything, and the
    /// owner of the state applies it with ``advance(_:)``: the one way the state changes.
    public enum Step: Sendable, Hashable {
        /// An alert went out: it takes a place in the window.
        case alerted(at: ContinuousClock.Instant)
        /// An alert was held back: it counts toward the next summary.
        case heldBack
        /// The summary alert went out, announcing `count` held-back notifications.
        case summarized(count: Int, at: ContinuousClock.Instant)
    }

    /// The step for a notification that wants to alert at `now`; changes nothing.
    public func step(forAlertAt now: ContinuousClock.Instant) -> Step {
        pendingSummary == 0 && alerts(inWindowAt: now) < limit.maxAlerts ? .alerted(at: now) : .heldBack
    }

    /// The summary step, once the window has room and something was held back; changes nothing.
    public func summaryStep(at now: ContinuousClock.Instant) -> Step? {
        guard pendingSummary > 0, alerts(inWindowAt: now) < limit.maxAlerts else { return nil }
        return .summarized(count: pendingSummary, at: now)
    }

    public mutating func advance(_ step: Step) {
        switch step {
        case .alerted(let now):
            prune(now)
            recent.append(now)
        case .heldBack:
            pendingSummary += 1
        case .summarized(let count, let now):
            prune(now)
            recent.append(now)
            pendingSummary -= min(count, pendingSummary)
        }
    }

    private func alerts(inWindowAt now: ContinuousClock.Instant) -> Int {
        recent.reduce(0) { $0 + (now - $1 < limit.window ? 1 : 0) }
    }

    private mutating func prune(_ now: ContinuousClock.Instant) {
        recent.removeAll { now - $0 >= limit.window }
    }
}
