/// The bounds on what an operator may set when starting a relay (`notifbridge relay serve`),
/// checked before anything starts so that a bad value is named in a clear error rather than
/// found by a trap or an accessory's lost messages.
public enum RelaySettings {
    /// What one accessory may do at once (pushes or posts): at least one, or it could never go.
    public static let rateBurst = 1...100_000
    /// The time one more takes to be allowed, in seconds.
    public static let rateIntervalSeconds = 0.001...3_600.0
    /// Messages waiting for one accessory.
    public static let queuedMessages = 1...1_000_000
    /// Bytes waiting for one accessory: at least one message of the largest length an accessory
    /// takes, so that any message the relay admits can be queued; at most 1 GiB.
    public static let queuedBytes = RelayLimits().maxMessageLength...(1 << 30)
    /// How long a message waits for its accessory, in seconds: a minute to thirty days.
    public static let timeToLiveSeconds = 60...(30 * 24 * 3600)

    /// What a rate is for, so that an error names the right setting.
    public enum RateUse: Sendable {
        case pushes, posts
    }

    /// A rate of pushes or posts from an operator's values, or which one is out of bounds.
    public static func rate(of use: RateUse, burst: Int, intervalSeconds: Double) throws(RelaySettingError) -> RateLimit {
        try check(use == .pushes ? .pushBurst : .postBurst, burst, in: rateBurst)
        try check(use == .pushes ? .pushInterval : .postInterval, intervalSeconds, in: rateIntervalSeconds)
        return RateLimit(burst: burst, interval: .seconds(intervalSeconds))
    }

    /// The relay's limits with an operator's queue bounds and time to live; the rest as default.
    public static func limits(queuedMessages: Int, queuedBytes: Int, timeToLiveSeconds: Int) throws(RelaySettingError) -> RelayLimits {
        try check(.queuedMessages, queuedMessages, in: Self.queuedMessages)
        try check(.queuedBytes, queuedBytes, in: Self.queuedBytes)
        try check(.timeToLive, timeToLiveSeconds, in: Self.timeToLiveSeconds)
        return RelayLimits(maxQueuedMessages: queuedMessages, maxQueuedBytes: queuedBytes, timeToLive: .seconds(timeToLiveSeconds))
    }

    /// NaN and the infinities are in no range, so they are refused here too.
    private static func check<Value: Comparable>(_ setting: RelaySettingError.Setting, _ value: Value, in range: ClosedRange<Value>) throws(RelaySettingError) {
        guard range.contains(value) else {
            throw RelaySettingError(setting: setting, value: "\(value)", allowed: "\(range.lowerBound)...\(range.upperBound)")
        }
    }
}

/// An operator's setting outside its bounds.
public struct RelaySettingError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Setting: String, Sendable, CaseIterable {
        case pushBurst = "push burst"
        case pushInterval = "push interval (seconds)"
        case postBurst = "post burst"
        case postInterval = "post interval (seconds)"
        case queuedMessages = "queued messages"
        case queuedBytes = "queued bytes"
        case timeToLive = "time to live (seconds)"
    }

    public let setting: Setting
    public let value: String
    public let allowed: String

    public init(setting: Setting, value: String, allowed: String) {
        self.setting = setting
        self.value = value
        self.allowed = allowed
    }

    public var description: String { "the \(setting.rawValue) must be \(allowed), not \(value)" }
}
