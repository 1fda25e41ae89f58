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

    /// Whole seconds until `accessory` may go again (at least 1), for `Retry-After`.
    func retryAfterSeconds(_ accessory: String) -> Int {
        allowance.withLock { $0.retryAfterSeconds(for: accessory, now: .now) }
    }
}
