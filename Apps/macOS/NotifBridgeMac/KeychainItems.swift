import Foundation
import NotifBridgeAccessoryCore
import Security

/// The Keychain as `SecretItems`: generic-password items of one service, by account. The
/// key-store logic above it (`SecretItemKeyStore`) is tested on Linux; this is one call each.
struct KeychainItems: SecretItems {
    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var status: OSStatus
        var description: String { "Keychain \(operation) failed with status \(status)" }
    }

    let service: String

    private func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    func read(account: String) throws -> Data? {
        var search = query(account)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw Failure(operation: "read", status: status) }
        return result as? Data
    }

    func add(account: String, data: Data) throws -> Bool {
        var item = query(account)
        item[kSecValueData as String] = data
        let status = SecItemAdd(item as CFDictionary, nil)
        if status == errSecDuplicateItem { return false }
        guard status == errSecSuccess else { throw Failure(operation: "add", status: status) }
        return true
    }

    func update(account: String, data: Data) throws {
        let status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        guard status == errSecSuccess else { throw Failure(operation: "update", status: status) }
    }
}
