import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// Golden vectors for firmware writers and our own tests: a fixed accessory key, a recorded key
/// exchange, and recorded ciphertexts with their expected plaintexts; plus framing examples.
/// Field names are the contract of Tests/Vectors/golden-v1.json (docs/PROTOCOL.md §8).
enum GoldenVectors {
    struct File: Codable {
        var description: String
        var exchanges: [Exchange]
        var framing: [Framing]
    }

    struct Exchange: Codable {
        var suite: String
        var version: String
        var identifier: String
        var featureID: String
        var accessorySecret: String
        var accessoryPublicKey: String
        var keyID: String
        var encapsulatedKey: String
        var exchangeID: String
        var hostToAccessoryKey: String
        var accessoryToHostKey: String
        var messages: [Message]
    }

    struct Message: Codable {
        var direction: String
        var summary: String
        var ciphertext: String
        var plaintext: String
    }

    struct Framing: Codable {
        var chunkLength: Int
        var message: String
        var chunks: [String]
    }

    static let fixedDate = Date(timeIntervalSince1970: 1_778_490_000)  // 2026-05-11 09:00:00 UTC

    static func make() throws -> Data {
        let file = File(
            description: "NotifBridge protocol v1 golden vectors: fixed accessory keys, one recorded exchange per suite, sealed HostEvents and an AccessoryEvent with their plaintexts (protobuf), and chunk framing examples.",
            exchanges: try [exchange(.xWing, secret: Array(0x00...0x1f)), exchange(.p256, secret: Array(0x01...0x20))],
            framing: framing()
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    private static func exchange(_ suite: CipherSuite, secret: [UInt8]) throws -> Exchange {
        let identifier = PhoneDefaults.accessoryIdentifier
        let featureID = PhoneDefaults.featureID
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(secret))
        var sender = try SenderSession(suite: suite, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
        let keys = try sender.featureKeys(featureID: featureID)
        var messages: [Message] = []
        var sequence: UInt64 = 0
        let operations = Array(SampleNotifications.demo(now: fixedDate).prefix(3)) + [.remove(source: "com.apple.MobileSMS", id: "msg-4711"), .removeAll]
        for operation in operations {
            sequence += 1
            var event = HostEvent()
            event.sequence = sequence
            event.event = try DataProvider.event(for: operation, now: fixedDate)
            let plaintext = WireCodec.encode(event)
            let ciphertext = try FeatureCipher.seal(plaintext, using: keys.hostToAccessory)
            messages.append(Message(direction: Direction.hostToAccessory.rawValue, summary: "\(operation.summary) #\(sequence)", ciphertext: hex(ciphertext), plaintext: hex(plaintext)))
        }
        var receipt = AccessoryEvent()
        receipt.sequence = 1
        receipt.receipt = .with {
            $0.hostSequence = 1
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-4711")
            $0.stored = true
            $0.alerted = true
        }
        let receiptBytes = WireCodec.encode(receipt)
        messages.append(Message(
            direction: Direction.accessoryToHost.rawValue,
            summary: "receipt for #1",
            ciphertext: hex(try FeatureCipher.seal(receiptBytes, using: keys.accessoryToHost)),
            plaintext: hex(receiptBytes)
        ))
        return Exchange(
            suite: sender.parameters.cipherSuite,
            version: sender.parameters.version,
            identifier: identifier,
            featureID: featureID,
            accessorySecret: hex(secret),
            accessoryPublicKey: hex(key.publicKeyRepresentation),
            keyID: hex(key.keyID),
            encapsulatedKey: hex(sender.parameters.encapsulatedKey),
            exchangeID: String(format: "%016llx", sender.parameters.exchangeID),
            hostToAccessoryKey: hex(keys.rawBytes(for: .hostToAccessory)),
            accessoryToHostKey: hex(keys.rawBytes(for: .accessoryToHost)),
            messages: messages
        )
    }

    private static func framing() -> [Framing] {
        let cases: [(Int, Int)] = [(20, 18), (20, 19), (20, 50), (182, 300), (4096, 300)]
        return cases.map { chunkLength, length in
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            var framer = ChunkFramer(chunkLength: chunkLength)
            return Framing(chunkLength: chunkLength, message: hex(message), chunks: framer.frame(message).map(hex))
        }
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
