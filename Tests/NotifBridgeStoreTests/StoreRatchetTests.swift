import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// The internet ratchets in the store: a real SQLite file, reopened as after a restart.
@Suite("Store ratchets")
struct StoreRatchetTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 7, count: 1120))
    let start = Date(timeIntervalSince1970: 1_778_490_000)
    static let keyID: [UInt8] = [9, 8, 7, 6]
    static let chainKeys = InternetChainKeys(hostToAccessory: Data(repeating: 0x11, count: 32), accessoryToHost: Data(repeating: 0x22, count: 32))

    private func open(_ directory: TemporaryDirectory) throws -> AccessoryStore {
        try AccessoryStore(path: directory.path + "/store.sqlite", retention: Retention(maxCount: 100_000, maxBytes: 1 << 30, maxAgeDays: 3650))
    }

    private func started(_ directory: TemporaryDirectory) throws -> AccessoryStore {
        let store = try open(directory)
        try store.saveExchange(exchange, keyID: [1], now: start)
        try store.startInternetRatchets(exchangeID: exchange.exchangeID, keyID: Self.keyID, chainKeys: Self.chainKeys)
        return store
    }

    /// Messages from the iPhone's side, each plaintext a `HostEvent` adding notification `n<index>`.
    private func messages(_ count: Int) throws -> [RatchetMessage] {
        var sender = try SendingRatchet(chainKey: Self.chainKeys.hostToAccessory)
        return try (0..<count).map { index in
            var event = HostEvent()
            event.sequence = UInt64(index + 1)
            event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "n\(index)", sourceName: "S", body: "b"), .standard), now: start)
            return try sender.seal(try WireCodec.encode(event), keyID: Self.keyID)
        }
    }

    /// Opens a message with the stored ratchet and stores its event with the ratchet's changes in
    /// one transaction, as the internet link does.
    @discardableResult
    private func receive(_ message: RatchetMessage, _ store: AccessoryStore) throws -> ApplyOutcome {
        var (ratchet, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        let (plaintext, changes) = try ratchet.openRecordingChanges(message, keyID: keyID)
        let event = try WireCodec.decode(HostEvent.self, from: plaintext)
        var burst = BurstLimiter(limit: .init())
        let conditions = AlertConditions(settings: .default, minuteOfDay: 600, now: .now)
        return try store.applyBatch([(event, exchange.exchangeID)], opened: [(exchange.exchangeID, changes)], now: start, conditions: conditions, burst: &burst)[0].get()
    }

    private func refusal(_ message: RatchetMessage, _ store: AccessoryStore) -> RatchetError.Code? {
        do {
            try receive(message, store)
            return nil
        } catch let error as RatchetError {
            return error.code
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("Out of order across restarts: skipped keys survive, a replay is refused after reopening")
    func reorderAcrossRestarts() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let messages = try messages(6)
        do {
            let store = try started(directory)
            try receive(messages[3], store)
            try receive(messages[0], store)
            try store.close()
        }
        let store = try open(directory)
        let saved = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        #expect(saved.ratchet.nextIndex == 4)
        #expect((0..<4).filter { saved.ratchet.isSkipped($0) } == [1, 2])
        #expect(refusal(messages[0], store) == .replayed)
        #expect(refusal(messages[3], store) == .replayed)
        for index in [2, 5, 1, 4] { try receive(messages[index], store) }
        #expect(try store.notifications(includeRemoved: true).count == 6)
        let final = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        #expect(final.ratchet.nextIndex == 6 && final.ratchet.skippedCount == 0)
    }

    @Test("The inbox and the store together: a batch whose commit fails opens again after reopening, and nothing is lost")
    func inboxFollowsAFailedCommit() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let messages = try messages(3).map(\.serialized)
        var store = try started(directory)
        func inbox() throws -> InternetInbox {
            let (ratchet, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
            return InternetInbox(ratchet: ratchet, keyID: keyID, exchangeID: exchange.exchangeID)
        }
        func commit(_ batch: [Data], into inbox: inout InternetInbox) throws {
            var events: [(event: HostEvent, exchangeID: UInt64)] = []
            var opened: [(exchangeID: UInt64, changes: ReceivingRatchet.Changes)] = []
            for message in batch {
                switch inbox.receive(message) {
                case .deliver(let event, let changes, _):
                    events.append((event, exchange.exchangeID))
                    opened.append((exchange.exchangeID, changes))
                case .discard(_, let changes, _):
                    opened.append((exchange.exchangeID, changes))
                case .refuse:
                    continue
                }
            }
            var burst = BurstLimiter(limit: .init())
            do {
                _ = try store.applyBatch(events, opened: opened, now: start, conditions: AlertConditions(settings: .default, minuteOfDay: 600, now: .now), burst: &burst)
                inbox.committed()
            } catch {
                inbox.rolledBack()
                throw error
            }
        }
        var first = try inbox()
        try commit([messages[0]], into: &first)
        try store.close()
        #expect(throws: (any Error).self) { try commit([messages[2], messages[1]], into: &first) }
        #expect(first.ratchet.nextIndex == 1)

        store = try open(directory)
        var second = try inbox()
        #expect(second.ratchet.snapshot == first.ratchet.snapshot)
        try commit([messages[2], messages[1], messages[0]], into: &second)
        let stored = try store.notifications(includeRemoved: true).map(\.notificationIdentifier).sorted()
        #expect(stored == ["n0", "n1", "n2"])
        #expect(try store.receivingRatchet(exchangeID: exchange.exchangeID)?.ratchet.nextIndex == 3)
    }

    /// An exchange and its internet ratchets are one transaction: a failure part-way (here a chain
    /// key the table refuses, after the exchange's row and the first chain went in) leaves the
    /// store as it was, the earlier exchange still active.
    @Test("An exchange is saved with its internet ratchets, or not at all", arguments: [(32, true), (31, false), (33, false)])
    func exchangeWithRatchetsIsAtomic(chainKeyLength: Int, saved: Bool) throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let earlier = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "earlier", encapsulatedKey: Data(repeating: 1, count: 1120))
        do {
            let store = try open(directory)
            try store.saveExchange(earlier, keyID: [1], now: start)
            let start = InternetRatchetStart(
                keyID: Self.keyID,
                chainKeys: InternetChainKeys(hostToAccessory: Self.chainKeys.hostToAccessory, accessoryToHost: Data(repeating: 0x22, count: chainKeyLength))
            )
            if saved {
                #expect(try store.saveExchange(exchange, keyID: [1], now: self.start, internet: start) == 2)
            } else {
                #expect(throws: (any Error).self) { try store.saveExchange(exchange, keyID: [1], now: self.start, internet: start) }
            }
        }
        let reopened = try open(directory)
        let active = try #require(try reopened.activeExchange(keyID: [1]))
        #expect(active.exchangeID == (saved ? exchange : earlier).exchangeID)
        #expect(try reopened.receivingRatchet(exchangeID: exchange.exchangeID)?.ratchet.nextIndex == (saved ? 0 : nil))
        #expect(try reopened.receivingRatchet(exchangeID: earlier.exchangeID) == nil)
    }

    @Test("An internet key ID of 3 or 5 bytes is refused before anything is written", arguments: [3, 5])
    func internetKeyIDLength(length: Int) throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try open(directory)
        let start = InternetRatchetStart(keyID: Array(repeating: 1, count: length), chainKeys: Self.chainKeys)
        #expect(throws: AccessoryStore.RatchetStoreError.self) { try store.saveExchange(exchange, keyID: [1], now: self.start, internet: start) }
        #expect(try store.activeExchange(keyID: [1]) == nil)
    }

    @Test("Starting again never resets a ratchet that has moved")
    func startIsIdempotent() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try started(directory)
        let messages = try messages(2)
        try receive(messages[1], store)
        let again = try store.startInternetRatchets(exchangeID: exchange.exchangeID, keyID: Self.keyID, chainKeys: Self.chainKeys)
        #expect(!again)
        #expect(refusal(messages[1], store) == .replayed)
        #expect(try store.receivingRatchet(exchangeID: exchange.exchangeID)?.ratchet.nextIndex == 2)
    }

    @Test("A stale save is refused: changes made from a copy behind the stored ratchet")
    func staleSaveRefused() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try started(directory)
        let messages = try messages(3)
        var (ratchet, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        let stale = ratchet
        let (_, changes) = try ratchet.openRecordingChanges(messages[2], keyID: keyID)
        try store.saveOpened(changes, exchangeID: exchange.exchangeID)
        var old = stale
        let (_, staleChanges) = try old.openRecordingChanges(messages[0], keyID: keyID)
        #expect(throws: AccessoryStore.RatchetStoreError.self) {
            try store.saveOpened(staleChanges, exchangeID: exchange.exchangeID)
        }
        let saved = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        #expect(saved.ratchet.nextIndex == 3 && saved.ratchet.skippedCount == 2)
        #expect(throws: AccessoryStore.UnknownExchange.self) {
            try store.startInternetRatchets(exchangeID: 42, keyID: Self.keyID, chainKeys: Self.chainKeys)
        }
    }

    /// Two copies of one stored ratchet (two inboxes, or one rolled back after its commit) both
    /// open message 0: the second save is at the same index as the stored one, and must fail.
    @Test("A second copy opening the same message is refused by the store, not saved as a replay")
    func twoCopiesOneMessage() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try started(directory)
        let messages = try messages(1)
        var (first, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        var second = first
        try store.saveOpened(try first.openRecordingChanges(messages[0], keyID: keyID).changes, exchangeID: exchange.exchangeID)
        let again = try second.openRecordingChanges(messages[0], keyID: keyID).changes
        #expect(throws: AccessoryStore.RatchetStoreError.self) { try store.saveOpened(again, exchangeID: exchange.exchangeID) }
        #expect(try store.receivingRatchet(exchangeID: exchange.exchangeID)?.ratchet.nextIndex == 1)
    }

    /// The stale copy's save would be at the stored index and would put back keys already spent,
    /// so messages 0–3 would open again after a restart.
    @Test("A stale copy cannot bring back spent keys: they stay spent after reopening")
    func spentKeysStaySpent() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let messages = try messages(5)
        do {
            let store = try started(directory)
            var (current, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
            var stale = current
            for index in [4, 0, 1, 2, 3] {
                try store.saveOpened(try current.openRecordingChanges(messages[index], keyID: keyID).changes, exchangeID: exchange.exchangeID)
            }
            let staleChanges = try stale.openRecordingChanges(messages[4], keyID: keyID).changes
            #expect(staleChanges.kept.count == 4)
            #expect(throws: AccessoryStore.RatchetStoreError.self) { try store.saveOpened(staleChanges, exchangeID: exchange.exchangeID) }
            try store.close()
        }
        let store = try open(directory)
        let saved = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        #expect(saved.ratchet.nextIndex == 5 && saved.ratchet.skippedCount == 0)
        for message in messages { #expect(refusal(message, store) == .replayed) }
    }

    /// Boundary: a batch whose ratchet changes save but one of whose events cannot be stored (an
    /// exchange the store does not hold) keeps nothing, so its message opens again on redelivery.
    @Test("An internet batch is all or nothing: a failed event leaves its key unspent")
    func failedEventKeepsItsKey() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try started(directory)
        let messages = try messages(2)
        var (ratchet, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        var opened: [(exchangeID: UInt64, changes: ReceivingRatchet.Changes)] = []
        var events: [(event: HostEvent, exchangeID: UInt64)] = []
        for (index, message) in messages.enumerated() {
            let (plaintext, changes) = try ratchet.openRecordingChanges(message, keyID: keyID)
            opened.append((exchange.exchangeID, changes))
            events.append((try WireCodec.decode(HostEvent.self, from: plaintext), index == 1 ? 42 : exchange.exchangeID))
        }
        var burst = BurstLimiter(limit: .init())
        let conditions = AlertConditions(settings: .default, minuteOfDay: 600, now: .now)
        #expect(throws: AccessoryStore.InternetBatchFailed.self) {
            try store.applyBatch(events, opened: opened, now: start, conditions: conditions, burst: &burst)
        }
        #expect(try store.notifications(includeRemoved: true).isEmpty)
        #expect(try store.receivingRatchet(exchangeID: exchange.exchangeID)?.ratchet.nextIndex == 0)
        try receive(messages[1], store)
        try receive(messages[0], store)
        #expect(try store.notifications(includeRemoved: true).count == 2)
        // Without ratchet changes, a batch's failures stay per event, as before.
        let results = try store.applyBatch([(events[0].event, 42)], now: start, conditions: conditions, burst: &burst)
        #expect(throws: AccessoryStore.UnknownExchange.self) { try results[0].get() }
    }

    @Test("Sealing commits the moved chain before it returns: a reopened store never reuses an index")
    func sendingPersistsBeforeTransmit() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        var indices: [UInt32] = []
        for _ in 0..<3 {
            let store = try started(directory)
            indices.append(try store.sealForInternet(Data("reply".utf8), exchangeID: exchange.exchangeID).messageIndex)
            try store.close()
        }
        #expect(indices == [0, 1, 2])
        var receiver = try ReceivingRatchet(chainKey: Self.chainKeys.accessoryToHost)
        let store = try open(directory)
        let next = try store.sealForInternet(Data("fourth".utf8), exchangeID: exchange.exchangeID)
        #expect(next.keyID == Self.keyID)
        #expect(try receiver.open(next, keyID: Self.keyID) == Data("fourth".utf8))
    }

    @Test("A deactivated exchange keeps its ratchets (a resumed one goes on); an unknown exchange has none")
    func keptWithTheExchange() throws {
        let directory = try TemporaryDirectory("ratchet")
        defer { directory.remove() }
        let store = try started(directory)
        try store.forgetExchange(exchange.exchangeID)
        #expect(try store.receivingRatchet(exchangeID: exchange.exchangeID) != nil)
        #expect(try store.receivingRatchet(exchangeID: 77) == nil)
    }

    @Test("replies over the internet go to the newest exchange with ratchets and a recorded feature; none before")
    func replyTarget() throws {
        let directory = try TemporaryDirectory("store-reply-target")
        defer { directory.remove() }
        let store = try open(directory)
        try store.saveExchange(exchange, keyID: [1], now: start)
        try store.saveFeatureID("9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B", exchangeID: exchange.exchangeID)
        #expect(try store.internetReplyTarget() == nil, "a P-256 exchange (no ratchets) has no internet target")
        try store.startInternetRatchets(exchangeID: exchange.exchangeID, keyID: Self.keyID, chainKeys: Self.chainKeys)
        let target = try #require(try store.internetReplyTarget())
        #expect(target.exchangeID == exchange.exchangeID)
        #expect(target.featureID == "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B")
        // A newer exchange that has carried nothing yet has no feature: no target until it has.
        let newer = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 8, count: 1120))
        try store.saveExchange(newer, keyID: [1], now: start)
        try store.startInternetRatchets(exchangeID: newer.exchangeID, keyID: Self.keyID, chainKeys: Self.chainKeys)
        #expect(try store.internetReplyTarget() == nil, "only the newest exchange is active")
        try store.saveFeatureID("0A1B2C3D-5B6D-4E7F-8A9B-0C1D2E3F4A5B", exchangeID: newer.exchangeID)
        #expect(try store.internetReplyTarget()?.exchangeID == newer.exchangeID)
        try store.close()
        #expect(try open(directory).internetReplyTarget()?.featureID == "0A1B2C3D-5B6D-4E7F-8A9B-0C1D2E3F4A5B", "kept across a restart")
    }
}
