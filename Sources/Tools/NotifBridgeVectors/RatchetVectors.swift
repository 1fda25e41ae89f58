import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// Vectors for the internet transport's ratchet (docs/PROTOCOL.md §10): a recorded X-Wing
/// exchange with the golden accessory key, the two chain keys it exports, the first steps of
/// each chain, and messages sealed under fixed nonces, with the order a receiver gets them in
/// and what it must do with each. Field names are the contract of Tests/Vectors/ratchet-v1.json.
public enum RatchetVectors {
    public struct File: Codable, Sendable {
        public var description: String
        public var suite: String
        public var version: String
        public var identifier: String
        public var bluetoothUUID: String
        public var accessorySecret: String
        public var accessoryPublicKey: String
        /// SHA-384(accessoryPublicKey)[0..4].
        public var internetKeyID: String
        public var encapsulatedKey: String
        public var chains: [Chain]
    }

    public struct Chain: Codable, Sendable {
        public var direction: String
        public var exportContext: String
        /// The exported secret: the chain key for index 0.
        public var chainKey: String
        public var steps: [Step]
        public var messages: [Message]
        /// What a receiver is handed, in order, and what it must answer.
        public var deliveries: [Delivery]
    }

    public struct Step: Codable, Sendable {
        public var index: UInt32
        public var info: String
        public var messageKey: String
        public var nextChainKey: String
    }

    public struct Message: Codable, Sendable {
        public var index: UInt32
        public var summary: String
        public var nonce: String
        public var plaintext: String
        /// `keyID ‖ LE32(index) ‖ nonce ‖ ciphertext ‖ tag`.
        public var message: String
    }

    public struct Delivery: Codable, Sendable {
        public var index: UInt32
        /// `opened`, or the refusal: `replayed`, `tooFarAhead`, `decryptFailed`, `unknownKeyID`.
        public var outcome: String
    }

    /// The nonce of message `index` in chain `chain`: fixed, so that the file can be checked byte
    /// for byte by sealing again.
    public static func nonce(chain: UInt8, index: UInt32) -> [UInt8] {
        [0x4e, 0x42, chain, 0] + withUnsafeBytes(of: index.littleEndian, Array.init) + [0, 0, 0, 0]
    }

    public static func make() throws -> Data {
        let suite = CipherSuite.xWing
        let secret = Array<UInt8>(0x00...0x1f)
        let identifier = SimulatorIdentity.accessoryIdentifier
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(secret))
        let sender = try SenderSession(suite: suite, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
        let chainKeys = try sender.internetChainKeys(bluetoothUUID: identifier)
        let keyID = InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)

        let date = GoldenVectors.fixedDate
        var hostPlaintexts: [(String, [UInt8])] = []
        let operations = Array(SampleNotifications.demo(now: date).prefix(3)) + [.remove(source: "com.apple.MobileSMS", id: "msg-4711")]
        for (offset, operation) in operations.enumerated() {
            var event = HostEvent()
            event.sequence = UInt64(offset + 1)
            event.event = try DataProvider.event(for: operation, now: date)
            hostPlaintexts.append(("\(operation.summaryLine) #\(offset + 1)", WireCodec.encode(event)))
        }
        var receipt = AccessoryEvent()
        receipt.sequence = 1
        receipt.receipt = .with {
            $0.hostSequence = 1
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-4711")
            $0.stored = true
            $0.alerted = true
        }

        let file = File(
            description: "NotifBridge internet-transport ratchet vectors: an X-Wing exchange with the golden accessory key, the chain keys it exports, the first ratchet steps, messages sealed under fixed nonces, and the outcomes a receiver must give for a delivery order with reordering and a replay.",
            suite: suite.rawValue,
            version: sender.parameters.version,
            identifier: identifier,
            bluetoothUUID: identifier,
            accessorySecret: hexString(secret),
            accessoryPublicKey: hexString(key.publicKeyRepresentation),
            internetKeyID: hexString(keyID),
            encapsulatedKey: hexString(sender.parameters.encapsulatedKey),
            chains: [
                try chain(
                    .hostToAccessory, number: 1, chainKey: chainKeys.hostToAccessory, bluetoothUUID: identifier, keyID: keyID, plaintexts: hostPlaintexts,
                    deliveries: [(0, "opened"), (2, "opened"), (1, "opened"), (1, "replayed"), (3, "opened"), (3, "replayed")]
                ),
                try chain(
                    .accessoryToHost, number: 2, chainKey: chainKeys.accessoryToHost, bluetoothUUID: identifier, keyID: keyID,
                    plaintexts: [("receipt for #1", WireCodec.encode(receipt))],
                    deliveries: [(0, "opened"), (0, "replayed")]
                ),
            ]
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    private static func chain(
        _ direction: Direction, number: UInt8, chainKey: Data, bluetoothUUID: String, keyID: [UInt8],
        plaintexts: [(String, [UInt8])], deliveries: [(UInt32, String)]
    ) throws -> Chain {
        var steps: [Step] = []
        var key = chainKey
        for index in UInt32(0)..<4 {
            let (messageKey, next) = InternetRatchet.step(chainKey: key, index: index)
            steps.append(Step(index: index, info: hexString(InternetRatchet.stepInfo(index: index)), messageKey: hexString(messageKey), nextChainKey: hexString(next)))
            key = next
        }
        var ratchet = try SendingRatchet(chainKey: chainKey)
        var messages: [Message] = []
        for (summary, plaintext) in plaintexts {
            let index = ratchet.nextIndex
            let nonce = nonce(chain: number, index: index)
            let message = try ratchet.seal(plaintext, keyID: keyID, nonces: NonceSource { nonce })
            messages.append(Message(index: index, summary: summary, nonce: hexString(nonce), plaintext: hexString(plaintext), message: hexString(message.serialized)))
        }
        return Chain(
            direction: direction.rawValue,
            exportContext: InternetRatchet.exportContext(bluetoothUUID: bluetoothUUID, direction: direction),
            chainKey: hexString(chainKey),
            steps: steps,
            messages: messages,
            deliveries: deliveries.map { Delivery(index: $0.0, outcome: $0.1) }
        )
    }

    public static func load(from url: URL) throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }
}
