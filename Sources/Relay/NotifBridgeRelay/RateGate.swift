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
        admit(accessory) == nil
    }

    /// nil when `accessory` may go now (and it is counted); otherwise the whole seconds until it
    /// may go again (at least 1), for `Retry-After`. One lock and one instant for both answers.
    func admit(_ accessory: String) -> Int? {
        allowance.withLock { allowance in
            let now = ContinuousClock.now
            return allowance.take(for: accessory, now: now) ? nil : allowance.retryAfterSeconds(for: accessory, now: now)
        }
    }
}
