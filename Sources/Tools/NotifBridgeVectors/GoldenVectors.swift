import Crypto
import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// Golden vectors for firmware writers and our own tests: a fixed accessory key, a recorded key
/// exchange, and recorded ciphertexts with their expected plaintexts; plus framing examples.
/// Field names are the contract of Tests/Vectors/golden-v1.json (docs/PROTOCOL.md §8).
public enum GoldenVectors {
    public struct File: Codable, Sendable {
        public var description: String
        public var exchanges: [Exchange]
        public var framing: [Framing]
    }

    public struct Exchange: Codable, Sendable {
        public var suite: String
        public var version: String
        public var identifier: String
        public var featureID: String
        public var accessorySecret: String
        public var accessoryPublicKey: String
        public var keyID: String
        public var encapsulatedKey: String
        public var exchangeID: String
        public var hostToAccessoryKey: String
        public var accessoryToHostKey: String
        public var messages: [Message]
    }

    public struct Message: Codable, Sendable {
        public var direction: String
        public var summary: String
        public var ciphertext: String
        public var plaintext: String
        /// `plaintext` parsed (a HostEvent or an AccessoryEvent), in proto3 JSON.
        public var decoded: DecodedJSON
    }

    public struct Framing: Codable, Sendable {
        public var chunkLength: Int
        public var message: String
        public var chunks: [String]
    }

    public static let fixedDate = Date(timeIntervalSince1970: 1_778_490_000)  // 2026-05-11 09:00:00 UTC

    /// Writes the file. With `recorded`, each suite's exchange is the one that file recorded (the
    /// accessory's side derives the same keys from its encapsulated key), and a recorded
    /// ciphertext that still opens to its message's plaintext is kept, so regenerating gives the
    /// same bytes unless what the messages say changed. Without it, a new encapsulation and new
    /// nonces change every key and ciphertext.
    public static func make(recorded: File? = nil) throws -> Data {
        let suites: [(CipherSuite, [UInt8])] = [(.xWing, Array(0x00...0x1f)), (.p256, Array(0x01...0x20))]
        let file = File(
            description: "NotifBridge protocol v1 golden vectors: fixed accessory keys, one recorded exchange per suite, sealed HostEvents and an AccessoryEvent with their plaintexts (protobuf), and chunk framing examples.",
            exchanges: try suites.map { suite, secret in
                try exchange(suite, secret: secret, recorded: recorded?.exchanges.first { $0.suite == suite.rawValue && $0.accessorySecret == hexString(secret) })
            },
            framing: framing()
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    private static func exchange(_ suite: CipherSuite, secret: [UInt8], recorded: Exchange?) throws -> Exchange {
        let identifier = SimulatorIdentity.accessoryIdentifier
        let featureID = SimulatorIdentity.featureID
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(secret))
        let parameters: KeyExchangeParameters
        let keys: FeatureKeys
        if let recorded {
            parameters = try .recorded(suite, identifier: identifier, encapsulatedKey: recorded.encapsulatedKey)
            var recipient = try RecipientSession(privateKey: key, parameters: parameters)
            keys = try recipient.featureKeys(featureID: featureID)
        } else {
            var sender = try SenderSession(suite: suite, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
            parameters = sender.parameters
            keys = try sender.featureKeys(featureID: featureID)
        }
        /// The recorded ciphertext at `index` if it opens to `plaintext`, or a new seal.
        func sealed(_ plaintext: Data, index: Int, using key: SymmetricKey) throws -> Data {
            if let message = recorded?.messages.dropFirst(index).first, let bytes = Hex.bytes(message.ciphertext),
               (try? FeatureCipher.open(bytes, using: key)) == plaintext {
                return Data(bytes)
            }
            return try FeatureCipher.seal(plaintext, using: key)
        }
        var messages: [Message] = []
        var sequence: UInt64 = 0
        let operations = Array(SampleNotifications.demo(now: fixedDate).prefix(3)) + [.remove(source: "com.apple.MobileSMS", id: "msg-4711"), .removeAll]
        for operation in operations {
            sequence += 1
            var event = HostEvent()
            event.sequence = sequence
            event.event = try DataProvider.event(for: operation, now: fixedDate)
            let plaintext = WireCodec.encode(event)
            let ciphertext = try sealed(Data(plaintext), index: messages.count, using: keys.hostToAccessory)
            messages.append(Message(
                direction: Direction.hostToAccessory.rawValue,
                summary: "\(operation.summaryLine) #\(sequence)",
                ciphertext: hexString(ciphertext),
                plaintext: hexString(plaintext),
                decoded: try DecodedJSON(event)
            ))
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
            ciphertext: hexString(try sealed(Data(receiptBytes), index: messages.count, using: keys.accessoryToHost)),
            plaintext: hexString(receiptBytes),
            decoded: try DecodedJSON(receipt)
        ))
        return Exchange(
            suite: parameters.cipherSuite,
            version: parameters.version,
            identifier: identifier,
            featureID: featureID,
            accessorySecret: hexString(secret),
            accessoryPublicKey: hexString(key.publicKeyRepresentation),
            keyID: hexString(key.keyID),
            encapsulatedKey: hexString(parameters.encapsulatedKey),
            exchangeID: String(format: "%016llx", parameters.exchangeID),
            hostToAccessoryKey: hexString(keys.rawBytes(for: .hostToAccessory)),
            accessoryToHostKey: hexString(keys.rawBytes(for: .accessoryToHost)),
            messages: messages
        )
    }

    private static func framing() -> [Framing] {
        let cases: [(Int, Int)] = [(20, 18), (20, 19), (20, 50), (182, 300), (4096, 300)]
        return cases.map { chunkLength, length in
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            var framer = ChunkFramer(chunkLength: chunkLength)
            return Framing(chunkLength: chunkLength, message: hexString(message), chunks: framer.frame(message).map(hexString))
        }
    }

    /// Reads a vector file written by `make()`.
    public static func load(from url: URL) throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }
}
