import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import Synchronization
import Testing

/// The Mac accessory's Keychain key store, over a dictionary that answers as the Keychain does.
@Suite("Key store over secret items")
struct SecretItemKeyStoreTests {
    final class MemoryItems: SecretItems {
        let items = Mutex<[String: Data]>([:])
        let calls = Mutex<[String]>([])

        func read(account: String) throws -> Data? {
            calls.withLock { $0.append("read \(account)") }
            return items.withLock { $0[account] }
        }

        func add(account: String, data: Data) throws -> Bool {
            calls.withLock { $0.append("add \(account)") }
            return items.withLock { items in
                guard items[account] == nil else { return false }
                items[account] = data
                return true
            }
        }

        func update(account: String, data: Data) throws {
            calls.withLock { $0.append("update \(account)") }
            items.withLock { $0[account] = data }
        }
    }

    private func store() -> SecretItemKeyStore<MemoryItems> {
        SecretItemKeyStore(items: MemoryItems(), service: "org.notifbridge.mac")
    }

    @Test("Generated once, then loaded: the same key across launches", arguments: CipherSuite.allCases)
    func loadOrCreate(suite: CipherSuite) throws {
        let store = store()
        let (created, isNew) = try store.loadOrCreate(suite)
        #expect(isNew)
        let (loaded, isNewAgain) = try store.loadOrCreate(suite)
        #expect(!isNewAgain)
        #expect(loaded.publicKeyRepresentation == created.publicKeyRepresentation)
        #expect(store.items.items.withLock { $0.keys.sorted() } == [SecretItemKeyStore<MemoryItems>.account(for: suite)])
    }

    @Test("A rotated key updates the item in place; no moment without a key")
    func rotation() throws {
        let store = store()
        let first = try AccessoryPrivateKey.generate(.xWing)
        let second = try AccessoryPrivateKey.generate(.xWing)
        try store.save(first)
        try store.save(second)
        #expect(store.items.calls.withLock { $0 } == ["add identity-xwing", "add identity-xwing", "update identity-xwing"])
        #expect(try store.load(.xWing)?.publicKeyRepresentation == second.publicKeyRepresentation)
    }

    @Test("An item of the wrong length is reported, never replaced: 33 and 35 bytes around the 34", arguments: [33, 35, 0])
    func wrongLength(length: Int) throws {
        let store = store()
        _ = try store.items.add(account: "identity-xwing", data: Data(repeating: 1, count: length))
        #expect(throws: SecretItemKeyStore<MemoryItems>.Failure.self) { try store.loadOrCreate(.xWing) }
        #expect(store.items.items.withLock { $0["identity-xwing"]?.count } == length, "left as it was")
    }

    @Test("Another format or another suite's key under the account is refused", arguments: [
        (UInt8(2), UInt8(1)), (UInt8(1), UInt8(2)), (UInt8(0), UInt8(1)),
    ])
    func wrongHeader(format: UInt8, suite: UInt8) throws {
        let store = store()
        let key = try AccessoryPrivateKey.generate(.xWing)
        _ = try store.items.add(account: "identity-xwing", data: Data([format, suite]) + key.secretRepresentation)
        #expect(throws: SecretItemKeyStore<MemoryItems>.Failure.self) { try store.load(.xWing) }
    }

    @Test("Only the 32-byte secret is kept, and it restores the same public key")
    func layout() throws {
        let store = store()
        let key = try AccessoryPrivateKey.generate(.p256)
        try store.save(key)
        let item = try #require(store.items.items.withLock { $0["identity-p256"] })
        #expect(item.count == 34)
        #expect([UInt8](item.prefix(2)) == [1, 2])
        #expect(try store.load(.p256)?.publicKeyRepresentation == key.publicKeyRepresentation)
        #expect(try store.load(.xWing) == nil, "the other suite has no key yet")
    }
}
