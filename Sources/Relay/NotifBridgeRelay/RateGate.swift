import NotifBridgeRelayCore
import Synchronization

/// A ``RateAllowance`` shared by the server's tasks, on the monotonic clock.
final class RateGate: Sendable {
    private let allowance: Mutex<RateAllowance>

    init(rate: RateLimit) {
        allowance = Mutex(RateAllowance(rate: rate))
    }

    /// Whether `accessory` may go now; if so, it is counted.
    func allows(_ accessory: String) -> Bool {
        allowance.withLock { $0.take(for: accessory, now: .now) }
    }

    /// How long until `accessory` may go again, in whole seconds rounded up (at least 1): what an
    /// HTTP `Retry-After` says.
    func retryAfterSeconds(_ accessory: String) -> Int {
        let wait = allowance.withLock { $0.wait(for: accessory, now: .now) }
        let (seconds, attoseconds) = wait.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
