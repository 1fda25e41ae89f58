import Crypto
import Foundation
import NotifBridgeCrypto
import Synchronization

/// Signed-in browsers. The login's cookie is a session signed with a key derived from the
/// token, never the token: a cookie that leaks (a copied browser profile, a proxy's log) opens
/// the dashboard only until its session ends, and does not reveal the token, which opens it for
/// good. Signed, not remembered, so sessions outlive a restart of the accessory; a new token
/// (the file deleted) ends them all.
///
/// A cookie is `ID.EXPIRY.MAC`: 16 random bytes as hex, the Unix time it ends, and the
/// HMAC-SHA256 of the two under the session key, in base64 (Foundation decodes it, and
/// swift-crypto compares it in constant time).
final class DashboardSessions: Sendable {
    /// A working day and then some; the token logs in again after it.
    static let lifetime = Duration.seconds(12 * 3600)
    /// Sessions signed out and not yet expired, kept to refuse a copy of their cookie. Past it
    /// the one that ends soonest is forgotten (only a copy taken before the sign-out could use it).
    static let maxSignedOut = 1024

    private let key: SymmetricKey
    private let lifetime: Duration
    private let maxSignedOut: Int
    private let now: @Sendable () -> Date
    /// Expiry (Unix seconds) by session ID.
    private let signedOut = Mutex<[String: Int]>([:])

    init(token: DashboardToken, lifetime: Duration = DashboardSessions.lifetime, maxSignedOut: Int = DashboardSessions.maxSignedOut,
         now: @escaping @Sendable () -> Date = { Date() }) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(token.value.utf8)), info: Data("notifbridge dashboard sessions".utf8), outputByteCount: 32
        )
        self.lifetime = lifetime
        self.maxSignedOut = maxSignedOut
        self.now = now
    }

    /// Starts a session and returns its cookie value.
    func open() -> String {
        let id = SymmetricKey(size: .bits128).withUnsafeBytes { hexString($0) }
        let expiry = Int(now().timeIntervalSince1970) + Int(lifetime.components.seconds)
        let signed = "\(id).\(expiry)"
        return "\(signed).\(Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: key)).base64EncodedString())"
    }

    /// Whether `cookie` is a session this token signed that has not ended.
    func isOpen(_ cookie: Substring) -> Bool {
        guard let session = verified(cookie) else { return false }
        return signedOut.withLock { $0[session.id] == nil }
    }

    /// Ends the session `cookie` names, if it is one.
    func close(_ cookie: Substring) {
        guard let session = verified(cookie) else { return }
        let current = Int(now().timeIntervalSince1970)
        signedOut.withLock { signedOut in
            signedOut = signedOut.filter { $0.value > current }
            if signedOut.count >= maxSignedOut, let soonest = signedOut.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
                signedOut[soonest.key] = nil
            }
            signedOut[session.id] = session.expiry
        }
    }

    /// The session's ID and expiry, if the MAC is this key's and the session has not expired.
    private func verified(_ cookie: Substring) -> (id: String, expiry: Int)? {
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 32, let expiry = Int(parts[1]), let mac = Data(base64Encoded: String(parts[2])), mac.count == SHA256.byteCount else {
            return nil
        }
        let signed = "\(parts[0]).\(parts[1])"
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(signed.utf8), using: key) else { return nil }
        guard Double(expiry) > now().timeIntervalSince1970 else { return nil }
        return (String(parts[0]), expiry)
    }
}
