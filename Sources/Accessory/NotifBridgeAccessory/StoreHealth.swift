import NotifBridgeStore
import Synchronization

/// The first store failure that will not pass (``AccessoryStore/isBroken(_:)``). The daemon
/// stops on it and `run` throws it: a daemon that failed every notification while it ran on
/// kept pinging systemd's watchdog, so nothing restarted it, and nobody was told.
final class StoreHealth: Sendable {
    private let failure = Mutex<(any Error)?>(nil)
    private let stop: @Sendable () -> Void

    init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Records `error` if the store is broken by it; the first such error asks the daemon to
    /// stop, and returns true.
    func report(_ error: any Error) -> Bool {
        guard AccessoryStore.isBroken(error) else { return false }
        let first = failure.withLock { failure in
            guard failure == nil else { return false }
            failure = error
            return true
        }
        if first { stop() }
        return first
    }

    var broken: (any Error)? { failure.withLock { $0 } }

    /// Thrown by `run` after the stop.
    struct Broken: Error, CustomStringConvertible {
        var path: String
        var underlying: any Error
        var description: String {
            "the notification store \(path) failed in a way that will not pass (\(underlying)); the accessory stopped rather than fail every notification"
        }
    }
}
