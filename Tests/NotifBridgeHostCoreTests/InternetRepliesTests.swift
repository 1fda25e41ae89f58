import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// Replies over the internet, minus the network: the accessory seals receipts into APNs push
/// bodies, the iPhone's system side opens them, late, out of order and replayed.
@Suite("Internet replies")
struct InternetRepliesTests {
    static let sessionID = UUID(uuidString: "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B")!

    /// Both sides of one X-Wing exchange: the accessory's reply sender and the iPhone's receiver.
    private func pair() throws -> (InternetReplySender, InternetReplyReceiver) {
        let key = try AccessoryPrivateKey(suite: .xWing, secretRepresentation: Data(0..<32))
        let identifier = "7A0C2B64-2F1D-4E55-9A6B-3C8D1E0F4A21"
        let sender = try SenderSession(suite: .xWing, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
        let recipient = try RecipientSession(privateKey: key, parameters: sender.parameters)
        let accessoryKeys = try recipient.internetChainKeys(bluetoothUUID: identifier)
        let phoneKeys = try sender.internetChainKeys(bluetoothUUID: identifier)
        #expect(accessoryKeys.accessoryToHost == phoneKeys.accessoryToHost)
        #expect(accessoryKeys.hostToAccessory == phoneKeys.hostToAccessory)
        #expect(accessoryKeys.hostToAccessory != accessoryKeys.accessoryToHost)
        let keyID = InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)
        return (
            InternetReplySender(ratchet: try SendingRatchet(chainKey: accessoryKeys.accessoryToHost), keyID: keyID),
            InternetReplyReceiver(ratchet: try ReceivingRatchet(chainKey: phoneKeys.accessoryToHost), keyID: keyID)
        )
    }

    private func receipt(_ sequence: UInt64) -> AccessoryEvent {
        var event = AccessoryEvent()
        event.sequence = sequence
        event.receipt = .with {
            $0.hostSequence = sequence
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-\(sequence)")
            $0.stored = true
        }
        return event
    }

    @Test("Receipts reach the data provider in any order, each once")
    func reorderedAndReplayed() throws {
        var (sender, receiver) = try pair()
        let bodies = try (1...5).map { try sender.push(receipt(UInt64($0)), sessionIdentifier: Self.sessionID).jsonBody() }
        #expect(sender.ratchet.nextIndex == 5)
        for index in [0, 3, 1, 2, 4] {
            let message = try receiver.receive(pushBody: bodies[index])
            #expect(message.sessionID == Self.sessionID)
            #expect(try WireCodec.decode(AccessoryEvent.self, from: Array(message.data)) == receipt(UInt64(index + 1)))
        }
        #expect(throws: InternetReplyReceiver.Refusal.self) { try receiver.receive(pushBody: bodies[3]) }
        #expect(receiver.ratchet.skippedCount == 0)
    }

    @Test("A push from another exchange, or with a broken body, is refused and changes nothing")
    func refusals() throws {
        var (sender, receiver) = try pair()
        var (stranger, _) = try pair()
        var foreign = try stranger.push(receipt(1), sessionIdentifier: Self.sessionID)
        foreign.keyID = [0, 1, 2, 3]
        #expect(throws: InternetReplyReceiver.Refusal.self) { try receiver.receive(pushBody: foreign.jsonBody()) }
        #expect(throws: InternetReplyReceiver.Refusal.self) { try receiver.receive(pushBody: Data("{}".utf8)) }
        #expect(receiver.ratchet.nextIndex == 0)
        let body = try sender.push(receipt(1), sessionIdentifier: Self.sessionID).jsonBody()
        #expect(try receiver.receive(pushBody: body).sessionID == Self.sessionID)
    }
}
