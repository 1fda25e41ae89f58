import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

@Suite("Accessory session state machine")
struct AccessorySessionTests {
    private func hello(resume: (Data, UInt64)? = nil, version: UInt32 = 1, suites: [String] = []) -> LinkMessage {
        var message = LinkMessage()
        message.hello = .with {
            $0.protocolVersion = version
            $0.cipherSuites = suites
            if let resume { $0.resume = .with { $0.keyID = resume.0; $0.exchangeID = resume.1 } }
        }
        return message
    }

    @Test("Hello is answered with a KeyOffer carrying the suite, version, key and transports", arguments: CipherSuite.allCases)
    func keyOffer(suite: CipherSuite) throws {
        let key = try AccessoryPrivateKey.generate(suite)
        var session = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        let actions = session.received(hello())
        guard actions.count == 1, case .send(let message) = actions[0], case .keyOffer(let offer) = message.body else {
            Issue.record("expected one KeyOffer, got \(actions.map(\.name))")
            return
        }
        #expect(offer.cipherSuite == suite.rawValue)
        #expect(offer.version == "Version1")
        #expect(offer.publicKey.count == suite.publicKeyLength)
        #expect(offer.keyID == Data(key.keyID))
        #expect(offer.transports == [.bluetooth])
        #expect(offer.maxMessageLength == UInt32(WireLimits.defaultMaxMessageLength))
    }

    @Test("An X-Wing exchange hands the store its internet ratchets, the iPhone's exports; P-256 none", arguments: CipherSuite.allCases)
    func internetRatchetsStartWithTheExchange(suite: CipherSuite) throws {
        var link = try BackToBack(suite: suite)
        link.connect()
        let persisted = link.accessoryActions.compactMap { action -> InternetRatchetStart?? in
            if case .persistExchange(_, let internet) = action { return .some(internet) }
            return nil
        }
        try #require(persisted.count == 1)
        guard suite == .xWing else {
            #expect(persisted[0] == nil)
            return
        }
        let start = try #require(persisted[0])
        let pairing = try #require(link.host.pairing)
        let iPhone = try pairing.sender.internetChainKeys(bluetoothUUID: SimulatorIdentity.accessoryIdentifier)
        #expect(start.chainKeys.hostToAccessory == iPhone.hostToAccessory)
        #expect(start.chainKeys.accessoryToHost == iPhone.accessoryToHost)
        #expect(start.chainKeys.hostToAccessory != start.chainKeys.accessoryToHost)
        #expect(start.keyID == InternetRatchet.keyID(publicKey: link.accessory.identity.publicKeyRepresentation))
        #expect(start.keyID.count == 4)
        // What the iPhone seals with its chain, the accessory's opens.
        var sender = try SendingRatchet(chainKey: iPhone.hostToAccessory)
        var receiver = try ReceivingRatchet(chainKey: start.chainKeys.hostToAccessory)
        let message = try sender.seal(Data("hello".utf8), keyID: start.keyID)
        #expect(try receiver.open(message, keyID: start.keyID) == Data("hello".utf8))
    }

    @Test("A full exchange back to back delivers, and the receipt reaches the host", arguments: CipherSuite.allCases)
    func exchange(suite: CipherSuite) throws {
        var link = try BackToBack(suite: suite)
        link.connect()
        #expect(link.accessoryActions.map(\.name) == ["send KeyOffer", "persistExchange", "send KeyConfirm"])
        #expect(link.host.isEstablished)
        try link.send(.add(sample("m1"), .standard))
        try link.send(.update(sample("m1", body: "edited")))
        try link.send(.remove(source: "com.apple.MobileSMS", id: "m1"))
        #expect(link.deliveries.map(\.event.sequence) == [1, 2, 3])
        #expect(link.receipts.map(\.sequence) == [1, 2, 3])
        #expect(link.receipts.map(\.alerted) == [true, false, false])
        #expect(link.host.outstandingCount == 0)
    }

    @Test("Events sent before the exchange are queued and go out in order once it completes")
    func queuedBeforeEstablished() throws {
        var link = try BackToBack()
        try link.send(.add(sample("a"), .standard))
        try link.send(.remove(source: "com.apple.MobileSMS", id: "a"))
        #expect(link.deliveries.isEmpty)
        link.connect()
        #expect(link.deliveries.map { $0.event.notificationID?.notificationIdentifier } == ["a", "a"])
        #expect(link.deliveries.map(\.event.sequence) == [1, 2])
    }

    @Test("A tampered ciphertext: resync, forget the exchange, fresh key, new offer; the host re-keys and re-sends")
    func tamperedCiphertext() throws {
        var link = try BackToBack()
        link.connect()
        let firstKey = link.accessory.identity.keyID
        let oldExchange = try #require(link.accessory.exchangeID)
        link.linkUp = false
        try link.send(.add(sample("t1"), .standard))  // sealed and counted, but lost on the way
        link.linkUp = true
        var tampered = try #require(link.host.seal(try DataProvider.event(for: .add(sample("t1"), .standard), now: Date()), sequence: 1))
        tampered.sealed.ciphertext[20] ^= 0x01
        link.accessoryActions.removeAll()
        link.deliverToAccessory(tampered)
        #expect(Array(link.accessoryActions.map(\.name).prefix(4)) == ["send Resync", "forgetExchange", "replaceIdentity", "send KeyOffer"])
        #expect(link.accessory.identity.keyID != firstKey, "a fresh key is offered")
        #expect(link.accessory.isEstablished, "the host redid the exchange at once")
        #expect(link.accessory.exchangeID != oldExchange)
        // The unacknowledged add went again under the new exchange, with its number.
        #expect(link.deliveries.map { $0.event.notificationID?.notificationIdentifier } == ["t1"])
        #expect(link.deliveries.first?.event.sequence == 1)
        #expect(link.host.outstandingCount == 0)
        try link.send(.add(sample("t2"), .standard))
        #expect(link.deliveries.map(\.event.sequence) == [1, 2], "numbers continue under the new exchange")
    }

    @Test("After a resync, events outstanding under the old exchange go again with their numbers")
    func resendAfterResync() throws {
        var link = try BackToBack()
        link.connect()
        try link.send(.add(sample("a"), .standard))
        link.linkUp = false
        try link.send(.add(sample("b"), .standard))  // seq 2, lost
        try link.send(.add(sample("c"), .standard))  // seq 3, lost
        link.linkUp = true
        var garbage = LinkMessage()
        garbage.sealed = .with { $0.featureRef = 1; $0.ciphertext = Data(repeating: 7, count: 64) }
        link.deliverToAccessory(garbage)
        #expect(link.deliveries.map { $0.event.notificationID!.notificationIdentifier } == ["a", "b", "c"])
        #expect(link.deliveries.map(\.event.sequence) == [1, 2, 3])
        #expect(Set(link.deliveries.map(\.exchangeID)).count == 2, "b and c arrived under the new exchange")
        try link.send(.add(sample("d"), .standard))
        #expect(link.deliveries.last?.event.sequence == 4)
        #expect(link.host.outstandingCount == 0)
    }

    @Test("A failed transport is retried by the system a bounded number of times, then the event waits for the next link")
    func transportRetry() throws {
        var link = try BackToBack()
        link.connect()
        link.failTransmits = true
        try link.send(.add(sample("r"), .standard))
        let transmits = link.hostActions.filter { if case .transmit = $0 { true } else { false } }
        #expect(transmits.count == 1 + HostSession.maxTransportRetries)
        #expect(link.deliveries.isEmpty)
        link.failTransmits = false
        link.reconnect()
        #expect(link.accessoryActions.contains { $0.name == "resumedExchange" })
        #expect(link.deliveries.map(\.event.sequence) == [1])
        #expect(link.host.outstandingCount == 0)
    }

    @Test("Sealed size: the accessory's maximum is sent, one byte more is refused and uses no number")
    func advertisedMaximumBoundary() throws {
        var probe = try BackToBack()
        probe.connect()
        let body = String(repeating: "x", count: 300)
        let event = try DataProvider.event(for: .add(sample("edge", body: body), .standard), now: Date(timeIntervalSince1970: 1_778_490_000))
        let sealed = probe.host.seal(event, sequence: 1)
        let limit = WireCodec.encode(try #require(sealed)).count

        var link = try BackToBack(limits: WireLimits(maxMessageLength: limit))
        link.connect()
        #expect(throws: AccessoryError.self) { try link.send(.add(sample("over", body: body + "x"), .standard)) }
        #expect(try link.send(.add(sample("edge", body: body), .standard)) == 1, "the refused event used no number")
        #expect(link.deliveries.map { $0.event.notificationID?.notificationIdentifier } == ["edge"])
    }

    @Test("Local-network links refuse P-256 key material and keep offering")
    func p256RefusedOnLocalNetwork() throws {
        var link = try BackToBack(suite: .p256, allowsP256: false)
        link.connect()
        #expect(!link.accessory.isEstablished)
        #expect(!link.accessoryActions.contains { $0.name == "persistExchange" })
        #expect(link.linkErrors.map(\.code) == [.unsupportedSuite])
    }

    @Test("Resume: a matching exchange is confirmed without a new exchange; a stale one gets a KeyOffer")
    func resume() throws {
        var link = try BackToBack()
        link.connect()
        let pairing = try #require(link.host.pairing)
        let parameters = pairing.sender.parameters
        var resumed = AccessorySession(identity: link.accessory.identity, exchange: .init(parameters: parameters), configuration: link.accessory.configuration)
        #expect(resumed.received(hello(resume: (pairing.accessoryKeyID, pairing.exchangeID))).map(\.name) == ["resumedExchange", "send KeyConfirm"])
        #expect(resumed.isEstablished)

        var stale = AccessorySession(identity: link.accessory.identity, exchange: .init(parameters: parameters), configuration: link.accessory.configuration)
        #expect(stale.received(hello(resume: (pairing.accessoryKeyID, pairing.exchangeID &+ 1))).map(\.name) == ["send KeyOffer"])
    }

    @Test("Wrong protocol version or no common suite: explain and close")
    func refusedHello() throws {
        let key = try AccessoryPrivateKey.generate(.p256)
        var old = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        #expect(old.received(hello(version: 2)).map(\.name) == ["send LinkError(unsupportedVersion)", "close"])
        var picky = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        #expect(picky.received(hello(suites: ["XWing"])).map(\.name) == ["send LinkError(unsupportedSuite)", "close"])
    }

    @Test("Hello may list 4 suite names; 5 are refused")
    func helloSuiteCount() throws {
        let key = try AccessoryPrivateKey.generate(.xWing)
        var four = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        #expect(four.received(hello(suites: ["XWing", "P256", "a", "b"])).map(\.name) == ["send KeyOffer"])
        var five = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        #expect(five.received(hello(suites: ["XWing", "P256", "a", "b", "c"])).map(\.name) == ["send LinkError(tooLarge)", "close"])
    }

    @Test("KeyMaterial identifier: 64 bytes accepted, 65 refused", arguments: [(64, true), (65, false)])
    func identifierLength(length: Int, accepted: Bool) throws {
        var link = try BackToBack()
        link.host = HostSession(configuration: .init(identifier: String(repeating: "i", count: length), sessionID: SimulatorIdentity.sessionID))
        link.connect()
        #expect(link.accessory.isEstablished == accepted)
        #expect(link.linkErrors.map(\.code) == (accepted ? [] : [.tooLarge]))
    }

    @Test("Sealed before any exchange asks the host to resync")
    func sealedTooEarly() throws {
        var session = AccessorySession(identity: try AccessoryPrivateKey.generate(.xWing), exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        var sealed = LinkMessage()
        sealed.sealed = .with { $0.featureRef = 1; $0.ciphertext = Data(repeating: 0, count: 40) }
        #expect(session.received(sealed).map(\.name) == ["send LinkError(unexpected)", "send Resync", "send KeyOffer"])
    }

    @Test("Two bad messages in flight draw two resyncs; the host still ends with one agreed exchange")
    func resyncsInFlight() throws {
        var link = try BackToBack()
        link.connect()
        let stale = try #require(link.host.seal(try DataProvider.event(for: .add(sample("x"), .standard), now: Date()), sequence: 9))
        var tampered = stale
        tampered.sealed.ciphertext[0] ^= 0xFF
        link.holdAccessoryToHost = true
        link.deliverToAccessory(tampered)
        link.deliverToAccessory(stale)  // sealed under the exchange the accessory just dropped
        link.holdAccessoryToHost = false
        link.flushAccessoryToHost()
        #expect(link.host.isEstablished)
        #expect(link.accessory.isEstablished)
        #expect(link.host.pairing?.exchangeID == link.accessory.exchangeID)
        #expect(!link.hostActions.contains { if case .close = $0 { true } else { false } })
        try link.send(.add(sample("after"), .standard))
        #expect(link.deliveries.last?.event.notificationID?.notificationIdentifier == "after")
    }

    @Test("A well-encrypted but invalid event is refused without a resync, and the next one is delivered")
    func invalidPlaintext() throws {
        var link = try BackToBack()
        link.connect()
        try link.send(.add(sample("long", title: String(repeating: "x", count: ContentLimits.maxTextFieldLength + 1)), .standard))
        #expect(link.linkErrors.map(\.code) == [.tooLarge])
        #expect(link.accessory.isEstablished)
        #expect(link.receipts.map(\.stored) == [false], "the refusal is acknowledged so the host does not retry it")
        #expect(link.host.outstandingCount == 0)
        try link.send(.add(sample("ok", title: String(repeating: "x", count: ContentLimits.maxTextFieldLength)), .standard))
        #expect(link.deliveries.map { $0.event.notificationID?.notificationIdentifier } == ["ok"])
    }

    /// Found with the ledger fuzz target: a sequence of 2^63 passed validation and trapped in
    /// the store, which converts it to a signed 64-bit SQLite integer.
    @Test("HostEvent.sequence: 1 through 2^63 − 1 validate; 0 is malformed and 2^63 too large", arguments: [
        (UInt64(0), WireError.Code?.some(.malformedMessage)), (1, nil), (ContentLimits.maxSequence, nil),
        (ContentLimits.maxSequence + 1, .tooLarge), (.max, .tooLarge),
    ])
    func sequenceRange(sequence: UInt64, refused: WireError.Code?) {
        var event = HostEvent()
        event.sequence = sequence
        event.removeAll = .init()
        do {
            try AccessorySession.validate(event)
            #expect(refused == nil)
        } catch {
            #expect(error.code == refused)
        }
    }

    /// Found by the ledger fuzz target: the store's keys end at U+0000, so two ids that differ
    /// only after one were stored as one notification, and the second add replaced the first.
    @Test("A notification id part containing U+0000 is malformed", arguments: [
        ("a\u{0}b", "msg", true), ("com.example", "\u{0}", true), ("com.example", "msg", false),
    ])
    func nulInIdentifier(source: String, id: String, refused: Bool) {
        var event = HostEvent()
        event.sequence = 1
        event.remove = .with { $0.id = WireNotificationID(source: source, notification: id) }
        do {
            try AccessorySession.validate(event)
            #expect(!refused)
        } catch {
            #expect(refused && error.code == .malformedMessage)
        }
    }

    @Test("Feature ids: 64 bytes bind, 65 are refused; refs outside 1...255 are refused")
    func featureBinding() throws {
        var link = try BackToBack()
        link.connect()
        func bind(_ ref: UInt32, _ id: String) -> [String] {
            var message = LinkMessage()
            message.bindFeature = .with { $0.featureRef = ref; $0.featureID = id }
            return link.accessory.received(message).map(\.name)
        }
        #expect(bind(2, String(repeating: "f", count: 64)) == [])
        #expect(bind(3, String(repeating: "f", count: 65)) == ["send LinkError(malformed)"])
        #expect(bind(255, "x") == [])
        #expect(bind(256, "x") == ["send LinkError(malformed)"])
        #expect(bind(0, "x") == ["send LinkError(malformed)"])
    }
}
