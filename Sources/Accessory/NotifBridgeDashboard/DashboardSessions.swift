import Crypto
import Foundation
import NotifBridgeCrypto
import Synchronization

/// Signed-in browsers. The login's cookie holds a session's own random name, never the token:
/// a cookie that leaks (a copied browser profile, a proxy's log) opens the dashboard only until
/// its session ends, and does not reveal the token, which opens it for good (`Authorization:
/// Bearer`, new logins). A session ends after ``lifetime``, when the accessory restarts, or
/// when ``capacity`` newer logins have pushed it out.
final class DashboardSessions: Sendable {
    /// A working day and then some; the token logs in again after it.
    static let lifetime = Duration.seconds(12 * 3600)
    /// Browsers signed in at once. Only a holder of the token can log in, so this bounds memory
    /// against a script that logs in in a loop, not against strangers.
    static let capacity = 64

    /// Expiry by the SHA-256 of the session's name: a lookup's time says nothing about a guess.
    private let sessions = Mutex<[Data: ContinuousClock.Instant]>([:])
    private let lifetime: Duration
    private let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant

    init(lifetime: Duration = DashboardSessions.lifetime, capacity: Int = DashboardSessions.capacity,
         now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.now = now
    }

    /// Starts a session and returns its name for the cookie: 32 random bytes as hex.
    func open() -> String {
        let name = SymmetricKey(size: .bits256).withUnsafeBytes { hexString($0) }
        let instant = now()
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value > instant }
            if sessions.count >= capacity, let oldest = sessions.min(by: { $0.value < $1.value }) {
                sessions[oldest.key] = nil
            }
            sessions[Self.digest(name)] = instant + lifetime
        }
        return name
    }

    /// Whether `name` is a session that has not ended.
    func isOpen(_ name: Substring) -> Bool {
        let key = Self.digest(name)
        let instant = now()
        return sessions.withLock { sessions in
            guard let expiry = sessions[key] else { return false }
            guard expiry > instant else {
                sessions[key] = nil
                return false
            }
            return true
        }
    }

    /// Ends the session `name`, if it is one.
    func close(_ name: Substring) {
        let key = Self.digest(name)
        sessions.withLock { _ = $0.removeValue(forKey: key) }
    }

    var count: Int { sessions.withLock { $0.count } }

    private static func digest(_ name: some StringProtocol) -> Data {
        Data(SHA256.hash(data: Data(name.utf8)))
    }
}
