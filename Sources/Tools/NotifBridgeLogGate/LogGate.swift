import Synchronization

/// Log lines (and the accessory's presenter events) about what peers do, rationed per origin:
/// a peer that reconnects or misbehaves in a loop cannot flood the log. Suppressed lines are
/// summarised. The accessory keys its lines by remote address or Bluetooth device, the relay by
/// accessory ID.
public final class LogGate: Sendable {
    /// What a rationed line is about; each has its own share per origin.
    public enum Topic: String, Sendable {
        case refusals, connections
        /// Commits that failed: a full or damaged disk fails every notification, and a line for
        /// each would fill the disk that is already full.
        case storeFailures = "store failures"
        /// Hook runs that failed, or events a full hook queue dropped: a hook that fails on
        /// some input fails as often as a peer sends it.
        case hooks = "hook lines"
    }

    private let throttle: Mutex<LogThrottle>

    public init(_ throttle: LogThrottle) {
        self.throttle = Mutex(throttle)
    }

    /// Runs `write` unless `origin` has had its share of `topic` lines in the current window.
    public func pass(_ origin: String, _ topic: Topic = .refusals, _ write: () -> Void) {
        let key = "\(topic.rawValue) from \(origin)"
        if throttle.withLock({ $0.admit(key, now: .now) }) { write() }
    }

    /// A line for each window that has closed since the last call and suppressed lines.
    public func summaryLines() -> [String] {
        throttle.withLock { throttle in
            throttle.summaries(now: .now).map { "\($0.suppressed) more \($0.origin) in the last \(throttle.interval) were not logged" }
        }
    }
}
