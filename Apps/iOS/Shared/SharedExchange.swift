import Foundation
import struct NotifBridgeHostCore.SecurityRelay

/// The exchange the security extension agreed, for the transport extension to resume on its
/// own link: the two run in separate processes and share only the app group's defaults.
enum SharedExchange {
    static let appGroup = "group.org.notifbridge.NotifBridge"
    private static let keyIDKey = "exchange.keyID"
    private static let exchangeIDKey = "exchange.id"

    private static var defaults: UserDefaults? { UserDefaults(suiteName: appGroup) }

    static func load() -> SecurityRelay.Resume? {
        guard let defaults, let keyID = defaults.data(forKey: keyIDKey),
              let id = defaults.string(forKey: exchangeIDKey), let exchangeID = UInt64(id) else { return nil }
        return SecurityRelay.Resume(keyID: keyID, exchangeID: exchangeID)
    }

    static func save(_ resume: SecurityRelay.Resume?) {
        guard let defaults else { return }
        if let resume {
            defaults.set(resume.keyID, forKey: keyIDKey)
            // As a string: defaults hold signed 64-bit integers, and an exchange id uses all 64 bits.
            defaults.set(String(resume.exchangeID), forKey: exchangeIDKey)
        } else {
            defaults.removeObject(forKey: keyIDKey)
            defaults.removeObject(forKey: exchangeIDKey)
        }
    }
}
