import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// The daemon stops on a store that broke, whichever operation met it first. It heard only the
/// commits of notifications, so a store that broke during a key exchange, the relay's ratchet,
/// ANCS or a listing ended that one connection or request, and the daemon ran on until the next
/// notification failed.
@Suite("Store breakage")
struct StoreBreakageTests {
    static let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 1, count: 32))
    static let chainKeys = InternetChainKeys(hostToAccessory: Data(repeating: 0x11, count: 32), accessoryToHost: Data(repeating: 0x22, count: 32))

    /// What the store told `whenBroken`, in order.
    final class Heard: Sendable {
        private let errors = Mutex<[any Error]>([])
        func append(_ error: any Error) { errors.withLock { $0.append(error) } }
        var codes: [ResultCode?] { errors.withLock { $0.map { ($0 as? DatabaseError)?.resultCode } } }
    }

    /// A store with an exchange, its internet ratchets and 40 notifications, opened with a
    /// listener.
    private func filled(_ directory: TemporaryDirectory, _ heard: Heard) throws -> AccessoryStore {
        let store = try AccessoryStore(path: directory.path + "/accessory.sqlite") { heard.append($0) }
        try store.saveExchange(Self.exchange, keyID: [1, 2, 3], now: Date())
        try store.startInternetRatchets(exchangeID: Self.exchange.exchangeID, keyID: [9, 8, 7, 6], chainKeys: Self.chainKeys)
        var burst = BurstLimiter(limit: .unlimited)
        let events = try (0..<40).map { index in
            (event: try Self.added("n\(index)", sequence: UInt64(index + 1)), exchangeID: Self.exchange.exchangeID)
        }
        for result in try store.applyBatch(events, now: Date(), conditions: .noon(), burst: &burst) { _ = try result.get() }
        return store
    }

    static func added(_ id: String, sequence: UInt64) throws -> HostEvent {
        try .test(sequence, .add(HostNotification(source: "s", id: id, sourceName: "App", body: "b"), .standard))
    }

    static let operations: [(String, @Sendable (AccessoryStore) throws -> Void)] = [
        ("a listing (a read)", { _ = try $0.notificationPage(after: nil, limit: 10, includeRemoved: true) }),
        ("a key exchange (a write)", { store in
            let next = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "next", encapsulatedKey: Data(repeating: 2, count: 32))
            _ = try store.saveExchange(next, keyID: [1, 2, 3], now: Date())
        }),
        ("a forgotten exchange", { try $0.forgetExchange(exchange.exchangeID) }),
        ("the relay's ratchet", { _ = try $0.receivingRatchet(exchangeID: exchange.exchangeID) }),
        ("a reply sealed for the internet", { _ = try $0.sealForInternet([1, 2, 3], exchangeID: exchange.exchangeID) }),
        ("ANCS withdrawing what the iPhone no longer has", { _ = try $0.withdraw(identifierPrefix: "ancs:", keeping: [], now: Date()) }),
        ("a batch of notifications", { store in
            var burst = BurstLimiter(limit: .unlimited)
            _ = try store.applyBatch([(try added("late", sequence: 99), exchange.exchangeID)], now: Date(), conditions: .noon(), burst: &burst)
        }),
    ]

    @Test("an operation that meets damaged pages throws, and tells whenBroken the same error", arguments: operations)
    func damagedPagesAreHeard(operation: String, body: @Sendable (AccessoryStore) throws -> Void) throws {
        let directory = try TemporaryDirectory("store-breakage")
        defer { directory.remove() }
        let heard = Heard()
        let store = try filled(directory, heard)
        try body(store)
        #expect(heard.codes.isEmpty, "whole pages: nothing heard")
        try StoreDamage.corruptTables(ofStoreAt: store.path)
        #expect(throws: DatabaseError.self, "\(operation)") { try body(store) }
        #expect(heard.codes == [.SQLITE_CORRUPT], "\(operation)")
    }

    /// Only what ``AccessoryStore/isBroken(_:)`` says will not pass: a refused statement or a
    /// missing ratchet leaves the store as good as it was.
    @Test("a failure that is not the store's breaking is not heard")
    func otherFailuresAreNotHeard() throws {
        let directory = try TemporaryDirectory("store-breakage-other")
        defer { directory.remove() }
        let heard = Heard()
        let store = try filled(directory, heard)
        #expect(throws: DatabaseError.self, "the exchange ID is taken") {
            try store.beginANCSConnection(device: "d", exchangeID: Self.exchange.exchangeID, now: Date())
        }
        #expect(throws: (any Error).self, "no such exchange") { try store.sealForInternet([1], exchangeID: 77) }
        #expect(heard.codes.isEmpty)
    }

    @Test("hasReceivingRatchet says whether the exchange's receiving ratchet was started")
    func hasReceivingRatchet() throws {
        let directory = try TemporaryDirectory("store-has-ratchet")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/accessory.sqlite")
        try store.saveExchange(Self.exchange, keyID: [1, 2, 3], now: Date())
        #expect(try !store.hasReceivingRatchet(exchangeID: Self.exchange.exchangeID))
        try store.startInternetRatchets(exchangeID: Self.exchange.exchangeID, keyID: [9, 8, 7, 6], chainKeys: Self.chainKeys)
        #expect(try store.hasReceivingRatchet(exchangeID: Self.exchange.exchangeID))
        #expect(try !store.hasReceivingRatchet(exchangeID: Self.exchange.exchangeID &+ 1))
    }
}
