import Foundation
import NotifBridgeCrypto

/// Where the accessory keeps its private key: a 0600 file on Linux (`KeyFile`), the Keychain on
/// the Mac (`SecretItemKeyStore`). The key is generated on the accessory and kept only here; it
/// is never sent anywhere (Apple's rule, and ARCHITECTURE.md's first invariant).
public protocol AccessoryKeyStore: Sendable {
    /// Where the key is, for the log ("/var/lib/notifbridge/identity-xwing.key", "Keychain …").
    var location: String { get }
    /// The stored key of this suite; nil when there is none yet. Throws when something is stored
    /// but cannot be used: a new key would make every paired iPhone exchange keys again, so a
    /// damaged key is reported, never silently replaced.
    func load(_ suite: CipherSuite) throws -> AccessoryPrivateKey?
    /// Stores the key, replacing the one of its suite, durably before it returns: a key is
    /// offered only once it is kept (PROTOCOL.md §4.4).
    func save(_ key: AccessoryPrivateKey) throws
}

extension AccessoryKeyStore {
    /// Loads the key, or generates and saves one if there is none yet.
    /// - Parameter generate: the key generator (injected randomness; tests pass a fixed key).
    public func loadOrCreate(
        _ suite: CipherSuite,
        generate: (CipherSuite) throws -> AccessoryPrivateKey = { suite in try AccessoryPrivateKey.generate(suite) }
    ) throws -> (key: AccessoryPrivateKey, created: Bool) {
        if let key = try load(suite) { return (key, false) }
        let key = try generate(suite)
        try save(key)
        return (key, true)
    }
}
