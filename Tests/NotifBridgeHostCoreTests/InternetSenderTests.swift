import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// The system's internet sender: the keys of a completed exchange, sealing in order, and what
/// it hands over to be saved before each message leaves.
@Suite("Internet sender")
struct InternetSenderTests {
    static let identifier = "7A0C2B64-2F1D-4E55-9A6B-3C8D1E0F4A21"
    static let configuration = HostSession.Configuration(identifier: identifier, sessionID: UUID(uuidString: "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B")!)

    static func exchange(_ suite: CipherSuite) throws -> (AccessoryPrivateKey, HostSession.Pairing) {
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(0..<32))
        let sender = try SenderSession(suite: suite, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
        return (key, HostSession.Pairing(accessoryKeyID: Data(key.keyID), accessoryPublicKey: key.publicKeyRepresentation, sender: sender))
    }

    static func add(_ id: String) -> HostOperation {
        .add(HostNotification(source: "com.apple.MobileSMS", id: id, sourceName: "Messages", title: "Anna", body: "hello \(id)"), .standard)
    }

    @Test("an X-Wing exchange gives the accessory's own chains and key ID; P-256 gives none")
    func pairingFromExchange() throws {
        let (key, pairing) = try Self.exchange(.xWing)
        let internet = try #require(try InternetPairing(pairing, configuration: Self.configuration, nextSequence: 7))
        let recipient = try RecipientSession(privateKey: key, parameters: pairing.sender.parameters)
        let accessoryKeys = try recipient.internetChainKeys(bluetoothUUID: Self.identifier)
        #expect(internet.keyID == InternetRatchet.keyID(publicKey: key.publicKeyRepresentation))
        #expect(internet.sending == .init(chainKey: accessoryKeys.hostToAccessory, nextIndex: 0))
        #expect(internet.receiving == .init(chainKey: accessoryKeys.accessoryToHost, nextIndex: 0))
        #expect(internet.nextSequence == 7)
        #expect(internet.exchangeID == pairing.exchangeID)

        let (_, p256) = try Self.exchange(.p256)
        #expect(try InternetPairing(p256, configuration: Self.configuration, nextSequence: 1) == nil)
    }

    @Test("each seal uses up one index and one sequence number; the accessory's ratchet opens them in any order")
    func sealsInOrder() throws {
        let (key, pairing) = try Self.exchange(.xWing)
        let start = try #require(try InternetPairing(pairing, configuration: Self.configuration, nextSequence: 5))
        var sender = InternetSender(pairing: start)
        let first = try sender.seal(Self.add("a"), now: Date(timeIntervalSince1970: 1_800_000_000))
        let second = try sender.seal(Self.add("b"), now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect((first.sequence, first.messageIndex) == (5, 0))
        #expect((second.sequence, second.messageIndex) == (6, 1))
        #expect(sender.pairing.nextSequence == 7)
        #expect(sender.pairing.sending.nextIndex == 2)
        #expect(sender.pairing.sending.chainKey != start.sending.chainKey)

        let recipient = try RecipientSession(privateKey: key, parameters: pairing.sender.parameters)
        var receiving = try ReceivingRatchet(chainKey: try recipient.internetChainKeys(bluetoothUUID: Self.identifier).hostToAccessory)
        let keyID = InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)
        for (sealed, id) in [(second, "b"), (first, "a")] {
            let plaintext = try receiving.open(try RatchetMessage(parsing: sealed.message), keyID: keyID)
            let event = try WireCodec.decode(HostEvent.self, from: plaintext)
            #expect(event.sequence == sealed.sequence)
            #expect(event.add.notification.id.notificationIdentifier == id)
        }
    }

    @Test("an event already numbered keeps its number; the next new one follows the highest")
    func resealKeepsSequence() throws {
        let (_, pairing) = try Self.exchange(.xWing)
        var sender = InternetSender(pairing: try #require(try InternetPairing(pairing, configuration: Self.configuration, nextSequence: 3)))
        let earlier = try NotificationsForwarder(nextSequence: 9).serialize(Self.add("x"), now: Date())
        #expect(try sender.seal(earlier).sequence == 9)
        #expect(sender.pairing.nextSequence == 10)
        #expect(try sender.seal(Self.add("y"), now: Date()).sequence == 10)
    }
}
