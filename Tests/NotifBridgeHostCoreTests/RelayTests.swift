import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// The three extensions' logic on its own, as the iOS adapters will call it.
@Suite("Extension relays")
struct RelayTests {
    private static func offer(_ key: AccessoryPrivateKey, maxMessageLength: UInt32 = 0, keyID: Data? = nil) -> Notifbridge_V1_KeyOffer {
        .with {
            $0.cipherSuite = key.suite.rawValue
            $0.version = CipherSuite.versionName
            $0.publicKey = key.publicKeyRepresentation
            $0.keyID = keyID ?? Data(key.keyID)
            $0.maxMessageLength = maxMessageLength
        }
    }

    private static func encapsulated(for publicKey: SecurityMessage) throws -> SecurityMessage {
        let suite = try #require(CipherSuite(wireName: publicKey.cipherSuite))
        let sender = try SenderSession(suite: suite, accessoryPublicKey: publicKey.key, identifier: SimulatorIdentity.accessoryIdentifier)
        let p = sender.parameters
        return SecurityMessage(keyType: .encapsulatedKey, cipherSuite: p.cipherSuite, version: p.version, key: p.encapsulatedKey, identifier: p.identifier)
    }

    @Test("Security relay: public key to the system, its answer to the accessory verbatim, then confirmed and remembered", arguments: CipherSuite.allCases)
    func securityRoundTrip(suite: CipherSuite) throws {
        let key = try AccessoryPrivateKey.generate(suite)
        var relay = SecurityRelay(suites: [.xWing, .p256])
        _ = relay.hello(maxChunkLength: 4096)
        let publicKey = try #require(try relay.keyOffer(Self.offer(key, maxMessageLength: 9000)))
        #expect(publicKey.keyType == .publicKey)
        #expect(publicKey.key == key.publicKeyRepresentation)
        #expect(publicKey.version == "Version1")
        #expect(relay.maxMessageLength == 9000)

        let answer = try Self.encapsulated(for: publicKey)
        let material = try relay.encapsulatedKey(answer)
        guard case .keyMaterial(let km) = material.body else {
            Issue.record("expected KeyMaterial, got \(material.kindName)")
            return
        }
        #expect(km.cipherSuite == answer.cipherSuite && km.version == answer.version && km.identifier == answer.identifier)
        #expect(km.encapsulatedKey == answer.key && km.keyID == Data(key.keyID))
        #expect(try relay.keyOffer(Self.offer(key)) == nil, "a repeated offer for the answered key is ignored")

        let exchangeID = KeyExchangeParameters(cipherSuite: km.cipherSuite, version: km.version, identifier: km.identifier, encapsulatedKey: km.encapsulatedKey).exchangeID
        #expect(try relay.keyConfirm(.with { $0.exchangeID = exchangeID }) == .established(exchangeID: exchangeID, resumed: false))
        #expect(relay.resume == SecurityRelay.Resume(keyID: Data(key.keyID), exchangeID: exchangeID))

        relay.linkClosed()
        let hello = relay.hello(maxChunkLength: 4096)
        #expect(hello.hello.resume.exchangeID == exchangeID, "the next link asks to resume")
        #expect(try relay.keyConfirm(.with { $0.exchangeID = exchangeID; $0.resumed = true }) == .established(exchangeID: exchangeID, resumed: true))
    }

    @Test("Security relay refuses what it must not carry")
    func securityRefusals() throws {
        let key = try AccessoryPrivateKey.generate(.p256)
        var xWingOnly = SecurityRelay(suites: [.xWing])
        #expect(throws: SecurityRelay.Refusal.self) { try xWingOnly.keyOffer(Self.offer(key)) }

        var relay = SecurityRelay(suites: [.p256])
        #expect(throws: SecurityRelay.Refusal.self) { try relay.keyOffer(Self.offer(key, keyID: Data(repeating: 0, count: 8))) }
        let stray = SecurityMessage(keyType: .encapsulatedKey, cipherSuite: "P256", version: "Version1", key: Data(count: 65))
        #expect(throws: SecurityRelay.Refusal.self) { try relay.encapsulatedKey(stray) }
        _ = relay.hello(maxChunkLength: 4096)
        #expect(throws: SecurityRelay.Refusal.self) { try relay.keyConfirm(.with { $0.exchangeID = 7 }) }
    }

    @Test("Security relay: a second Resync while KeyMaterial is in flight starts nothing new")
    func resyncInFlight() throws {
        let key = try AccessoryPrivateKey.generate(.xWing)
        var relay = SecurityRelay(suites: [.xWing])
        _ = relay.hello(maxChunkLength: 4096)
        let publicKey = try #require(try relay.keyOffer(Self.offer(key)))
        _ = try relay.encapsulatedKey(try Self.encapsulated(for: publicKey))
        #expect(relay.resync() == false)
        #expect(relay.resume == nil)
    }

    @Test("Transport relay: nothing goes before the feature is bound, or for another session")
    func transportBinding() throws {
        let session = SimulatorIdentity.sessionID
        var relay = TransportRelay(sessionID: session)
        let message = TransportMessage(sessionID: session, data: Data([1, 2, 3]))
        #expect(throws: AccessoryMessageError.transportUnavailable) { try relay.outbound(message) }
        let bind = relay.bind()
        #expect(bind.bindFeature.featureID == session.uuidString)
        #expect(try relay.outbound(message).sealed.ciphertext == Data([1, 2, 3]))
        #expect(throws: AccessoryMessageError.transportUnavailable) { try relay.outbound(TransportMessage(sessionID: UUID(), data: Data())) }
        #expect(relay.inbound(.with { $0.featureRef = 2; $0.ciphertext = Data([9]) }) == nil)
        #expect(relay.inbound(.with { $0.featureRef = 1; $0.ciphertext = Data([9]) }) == TransportMessage(sessionID: session, data: Data([9])))
        relay.linkClosed()
        #expect(throws: AccessoryMessageError.transportUnavailable) { try relay.outbound(message) }
    }

    /// PROTOCOL §4.1: a Sealed names its feature by reference, or by ID when the reference is 0.
    @Test("Transport relay: an accessory's Sealed is taken by the bound reference or by the session's ID", arguments: [
        (1, "", true),
        (1, UUID().uuidString, true),
        (0, SimulatorIdentity.sessionID.uuidString, true),
        (0, UUID().uuidString, false),
        (0, "", false),
        (2, "", false),
        (2, SimulatorIdentity.sessionID.uuidString, false),
    ] as [(UInt32, String, Bool)])
    func inboundNaming(ref: UInt32, featureID: String, taken: Bool) {
        var relay = TransportRelay(sessionID: SimulatorIdentity.sessionID)
        _ = relay.bind()
        let sealed = Notifbridge_V1_Sealed.with {
            $0.featureRef = ref
            $0.featureID = featureID
            $0.ciphertext = Data([9])
        }
        #expect((relay.inbound(sealed) != nil) == taken)
    }

    @Test("The sealed length is computed exactly as encoding gives it, across varint boundaries", arguments: [0, 1, 28, 100, 122, 123, 124, 125, 126, 127, 128, 16_379, 16_380, 16_381, 16_383, 16_384, 262_144])
    func sealedLength(ciphertextLength: Int) {
        let encoded = WireCodec.encode(TransportRelay.sealed(Data(count: ciphertextLength))).count
        #expect(TransportRelay.sealedLength(ciphertextLength: ciphertextLength) == encoded)
    }

    @Test("Data provider: numbers are used only when sent, and a receipt settles its event")
    func forwarderNumbers() throws {
        var forwarder = NotificationsForwarder(nextSequence: 41)
        let note = HostNotification(source: "com.apple.MobileSMS", id: "m1", sourceName: "Messages", title: "Anna", body: "Hi")
        let first = try forwarder.serialize(.add(note, .standard), now: Date())
        #expect(try forwarder.serialize(.update(note), now: Date()).sequence == 41, "serialising alone uses no number")
        forwarder.sent(first)
        let second = try forwarder.serialize(.remove(source: note.source, id: note.id), now: Date())
        #expect(first.isAdd && !second.isAdd)
        #expect(second.sequence == 42)
        forwarder.sent(second)
        #expect(forwarder.unacknowledged.map(\.sequence) == [41, 42])

        var receipt = AccessoryEvent()
        receipt.event = .receipt(.with { $0.hostSequence = 41; $0.stored = true; $0.alerted = true })
        #expect(try forwarder.messageHandler(Data(WireCodec.encode(receipt))) == .receipt(.init(sequence: 41, stored: true, alerted: true)))
        #expect(forwarder.unacknowledged.map(\.sequence) == [42])
        // A second receipt for 41 (for a copy sent again), or one for a number never sent,
        // settles nothing and is dropped: an accessory could send those without end.
        #expect(try forwarder.messageHandler(Data(WireCodec.encode(receipt))) == nil)
        var stranger = AccessoryEvent()
        stranger.event = .receipt(.with { $0.hostSequence = 7_000; $0.stored = true })
        #expect(try forwarder.messageHandler(Data(WireCodec.encode(stranger))) == nil)
        #expect(forwarder.unacknowledged.map(\.sequence) == [42])

        var response = AccessoryEvent()
        response.event = .response(.with {
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "m1")
            $0.actionIdentifier = "reply"
            $0.userText = "On my way"
        })
        #expect(try forwarder.messageHandler(Data(WireCodec.encode(response))) == .response(NotificationResponse(sourceIdentifier: "com.apple.MobileSMS", notificationIdentifier: "m1", actionIdentifier: "reply", userText: "On my way")))
        #expect(throws: NotificationsForwarder.UnreadableMessage.self) { try forwarder.messageHandler(Data([0xFF, 0xFF])) }
    }

    @Test("Data provider: receipts in any order settle exactly their events, and the rest re-send in order")
    func forwarderReceiptsOutOfOrder() throws {
        var forwarder = NotificationsForwarder()
        let note = HostNotification(source: "com.apple.MobileSMS", id: "m1", sourceName: "Messages", title: "Anna", body: "Hi")
        for _ in 0..<2_000 { forwarder.sent(try forwarder.serialize(.update(note), now: Date())) }
        var generator = SeededGenerator(seed: 0x5EED)
        let acknowledged = Array(1...2_000).shuffled(using: &generator).prefix(1_500)
        for sequence in acknowledged {
            var receipt = AccessoryEvent()
            receipt.event = .receipt(.with { $0.hostSequence = UInt64(sequence); $0.stored = true })
            _ = try forwarder.messageHandler(Data(WireCodec.encode(receipt)))
        }
        let left = Set(1...2_000).subtracting(acknowledged).sorted().map(UInt64.init)
        #expect(forwarder.unacknowledgedCount == 500)
        #expect(forwarder.unacknowledged.map(\.sequence) == left, "what is left goes again in sequence order")
        #expect(forwarder.unacknowledged(left[0])?.sequence == left[0])
        #expect(forwarder.unacknowledged(UInt64(acknowledged.first!)) == nil)
    }
}
