import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// The internet path without the network: the iPhone's sending ratchet, the relay's store and
/// inbox session, and the accessory's inbox and store, each a real part on real SQLite files,
/// restarted where the issue asks. What the sockets will carry is exactly these bytes.
@Suite("Relay and ratchet together")
struct RelayRatchetPathTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 7, count: 1120))
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let keyID: [UInt8] = [9, 8, 7, 6]
    static let chainKeys = InternetChainKeys(hostToAccessory: Data(repeating: 0x11, count: 32), accessoryToHost: Data(repeating: 0x22, count: 32))
    static let accessory = "watch-1"

    /// The iPhone's side: message `index` adds notification `n<index>`.
    private func sealed(_ count: Int) throws -> [[UInt8]] {
        var sender = try SendingRatchet(chainKey: Self.chainKeys.hostToAccessory)
        return try (0..<count).map { index in
            var event = HostEvent()
            event.sequence = UInt64(index + 1)
            event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "n\(index)", sourceName: "S", body: "b"), .standard), now: now)
            return try Array(sender.seal(WireCodec.encode(event), keyID: Self.keyID).serialized)
        }
    }

    /// One inbox connection from the accessory until the relay has nothing more to send: each
    /// fetch's messages are opened as one batch, committed with their ratchet changes, then
    /// acknowledged. Returns the refusals the accessory's inbox made.
    private func connect(_ relay: RelayStore, _ store: AccessoryStore) throws -> [InternetInbox.Refusal.Code] {
        let (ratchet, keyID) = try #require(try store.receivingRatchet(exchangeID: exchange.exchangeID))
        var inbox = InternetInbox(ratchet: ratchet, keyID: keyID, exchangeID: exchange.exchangeID)
        var session = InboxSession(limits: relay.limits)
        var refusals: [InternetInbox.Refusal.Code] = []
        var pending = session.handle(.opened)
        while !pending.isEmpty {
            var events: [(event: HostEvent, exchangeID: UInt64)] = []
            var opened: [(exchangeID: UInt64, changes: ReceivingRatchet.Changes)] = []
            var highest: UInt64?
            var next: [InboxSession.Action] = []
            for action in pending {
                switch action {
                case .fetch(let after, let limit):
                    next += session.handle(.fetched(try relay.fetch(for: Self.accessory, after: after, limit: limit, now: now)))
                case .send(.deliver(let seq, let message)):
                    switch inbox.receive(message) {
                    case .deliver(let event, let changes, _):
                        events.append((event, exchange.exchangeID))
                        opened.append((exchange.exchangeID, changes))
                    case .discard(_, let changes, _):
                        opened.append((exchange.exchangeID, changes))
                    case .refuse(let refusal):
                        refusals.append(refusal.code)
                    }
                    highest = seq
                case .forget(let upTo):
                    try relay.forget(for: Self.accessory, upTo: upTo)
                case .send(.ack), .send(.push), .send(.pushed), .push, .close:
                    Issue.record("unexpected \(action)")
                }
            }
            if let highest {
                var burst = BurstLimiter(limit: .init())
                _ = try store.applyBatch(events, opened: opened, now: now, conditions: AlertConditions(settings: .default, minuteOfDay: 600, now: .now), burst: &burst)
                inbox.committed()
                next += session.handle(.received(RelayFrame.ack(seq: highest).encoded()))
            }
            pending = next
        }
        return refusals
    }

    private func storedIDs(_ store: AccessoryStore) throws -> [String] {
        try store.notifications(includeRemoved: true).map(\.notificationIdentifier).sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
    }

    @Test("Offline accessory, relay restart, reordering, a replay, an accessory restart and a gap past the window")
    func path() throws {
        let directory = try TemporaryDirectory("relay-path")
        defer { directory.remove() }
        let messages = try sealed(10)
        var relay = try RelayStore(path: directory.path + "/relay.sqlite")
        try relay.register(accessory: Self.accessory, inbox: try RelayToken(randomBytes: Array(repeating: 1, count: 32)), post: try RelayToken(randomBytes: Array(repeating: 2, count: 32)))
        var store = try AccessoryStore(path: directory.path + "/accessory.sqlite", retention: Retention(maxCount: 1000, maxBytes: 1 << 30, maxAgeDays: 3650))
        try store.saveExchange(exchange, keyID: [1], now: now)
        try store.startInternetRatchets(exchangeID: exchange.exchangeID, keyID: Self.keyID, chainKeys: Self.chainKeys)

        // The accessory is offline; the iPhone posts 0–4, then 6 before 5; the relay restarts.
        for index in [0, 1, 2, 3, 4, 6, 5] { _ = try relay.post(messages[index], to: Self.accessory, now: now) }
        try relay.close()
        relay = try RelayStore(path: directory.path + "/relay.sqlite")
        #expect(try connect(relay, store).isEmpty)
        #expect(try storedIDs(store) == (0...6).map { "n\($0)" })
        #expect(try relay.queue(of: Self.accessory) == .init(messages: 0, bytes: 0))

        // A copy of message 3 (the transport extension posted it twice): refused, acknowledged.
        _ = try relay.post(messages[3], to: Self.accessory, now: now)
        #expect(try connect(relay, store) == [.replayed])
        #expect(try relay.queue(of: Self.accessory) == .init(messages: 0, bytes: 0))

        // The accessory restarts; its ratchet comes back from its store.
        try store.close()
        store = try AccessoryStore(path: directory.path + "/accessory.sqlite", retention: Retention(maxCount: 1000, maxBytes: 1 << 30, maxAgeDays: 3650))
        for index in 7...9 { _ = try relay.post(messages[index], to: Self.accessory, now: now) }
        #expect(try connect(relay, store).isEmpty)
        #expect(try storedIDs(store) == (0...9).map { "n\($0)" })

        // One past the window of kept keys: refused without work, acknowledged, nothing stored.
        var far = try SendingRatchet(chainKey: Self.chainKeys.hostToAccessory, nextIndex: 10 + UInt32(InternetRatchet.maxSkippedKeys) + 1)
        _ = try relay.post(Array(try far.seal(Data("x".utf8), keyID: Self.keyID).serialized), to: Self.accessory, now: now)
        #expect(try connect(relay, store) == [.tooFarAhead])
        #expect(try storedIDs(store).count == 10)
        #expect(try relay.queue(of: Self.accessory) == .init(messages: 0, bytes: 0))
    }
}
