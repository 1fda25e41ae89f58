import Foundation
import NotifBridgeCrypto

/// A store of small secrets by name, as the Keychain's generic-password items are: the Mac
/// adapter implements it with `SecItemCopyMatching`, `SecItemAdd` and `SecItemUpdate`; tests with a
/// dictionary. Each call is one Keychain operation, so the logic above it is tested here.
public protocol SecretItems: Sendable {
    /// The item's data; nil when there is no such item (`errSecItemNotFound`).
    func read(account: String) throws -> Data?
    /// Adds an item; false when one exists already (`errSecDuplicateItem`).
    func add(account: String, data: Data) throws -> Bool
    /// Replaces an existing item's data.
    func update(account: String, data: Data) throws
}

/// The accessory's key in a `SecretItems` store: one item per suite, holding a format byte, the
/// suite and the 32-byte secret. Replacing a key updates the item in place instead of deleting
/// and adding it, so no moment exists without a key.
public struct SecretItemKeyStore<Items: SecretItems>: AccessoryKeyStore {
    public enum Failure: Error, CustomStringConvertible, Sendable, Hashable {
        /// Something is stored under the key's account that is not a key of ours.
        case unreadable(account: String, reason: String)
        case wrongSuite(account: String, found: UInt8, expected: CipherSuite)

        public var description: String {
            switch self {
            case .unreadable(let account, let reason): "Keychain item \(account) cannot be used: \(reason)"
            case .wrongSuite(let account, let found, let expected): "Keychain item \(account) holds suite \(found), expected \(expected.rawValue)"
            }
        }
    }

    /// The item's layout version; a later layout gets a new number, and this one is refused.
    public static var format: UInt8 { 1 }
    /// format(1) ‖ suite(1) ‖ secret(32).
    public static var itemLength: Int { 2 + 32 }

    public let items: Items
    /// The Keychain service the items are filed under (the Mac app's bundle identifier).
    public let service: String

    public init(items: Items, service: String) {
        self.items = items
        self.service = service
    }

    public var location: String { "Keychain service \(service)" }

    /// One account per suite, so an X-Wing and a P-256 key can be kept side by side.
    public static func account(for suite: CipherSuite) -> String { "identity-\(suite.rawValue.lowercased())" }

    static func tag(_ suite: CipherSuite) -> UInt8 {
        switch suite {
        case .xWing: 1
        case .p256: 2
        }
    }

    public func load(_ suite: CipherSuite) throws -> AccessoryPrivateKey? {
        let account = Self.account(for: suite)
        guard let data = try items.read(account: account) else { return nil }
        let bytes = [UInt8](data)
        guard bytes.count == Self.itemLength else {
            throw Failure.unreadable(account: account, reason: "\(bytes.count) bytes, a key item has \(Self.itemLength)")
        }
        guard bytes[0] == Self.format else {
            throw Failure.unreadable(account: account, reason: "format \(bytes[0]), this version reads format \(Self.format)")
        }
        guard bytes[1] == Self.tag(suite) else {
            throw Failure.wrongSuite(account: account, found: bytes[1], expected: suite)
        }
        do {
            return try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(bytes[2...]))
        } catch {
            throw Failure.unreadable(account: account, reason: error.description)
        }
    }

    public func save(_ key: AccessoryPrivateKey) throws {
        let account = Self.account(for: key.suite)
        let data = Data([Self.format, Self.tag(key.suite)]) + key.secretRepresentation
        if try !items.add(account: account, data: data) {
            try items.update(account: account, data: data)
        }
    }
}
