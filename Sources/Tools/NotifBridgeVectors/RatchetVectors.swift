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
        /// The index the delivered bytes carry.
        public var index: UInt32
        /// `opened`, or the refusal: `malformed`, `unknownKeyID`, `replayed`, `tooFarAhead`,
        /// `decryptFailed` (docs/PROTOCOL.md §10.4).
        public var outcome: String
        /// The bytes delivered, when they are not the recorded message of `index` (cut short,
        /// tampered with, or under another key ID or index).
        public var message: String?
        /// What the delivery shows.
        public var note: String?

        init(_ index: UInt32, _ outcome: String, message: Data? = nil, note: String? = nil) {
            self.index = index
            self.outcome = outcome
            self.message = message.map(hexString)
            self.note = note
        }
    }

    /// The nonce of message `index` in chain `chain`: fixed, so that the file can be checked byte
    /// for byte by sealing again.
    public static func nonce(chain: UInt8, index: UInt32) -> [UInt8] {
        [0x4e, 0x42, chain, 0] + withUnsafeBytes(of: index.littleEndian, Array.init) + [0, 0, 0, 0]
    }

    /// Writes the file. With `recorded`, the exchange is the one that file recorded (the
    /// accessory's side derives the same chain keys from its encapsulated key), so regenerating
    /// gives the same bytes; without it, a new encapsulation changes every key and message.
    public static func make(recorded: File? = nil) throws -> Data {
        let suite = CipherSuite.xWing
        let secret = Array<UInt8>(0x00...0x1f)
        let identifier = SimulatorIdentity.accessoryIdentifier
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(secret))
        let parameters: KeyExchangeParameters
        let chainKeys: InternetChainKeys
        if let recorded {
            parameters = try .recorded(suite, identifier: identifier, encapsulatedKey: recorded.encapsulatedKey)
            chainKeys = try RecipientSession(privateKey: key, parameters: parameters).internetChainKeys(bluetoothUUID: identifier)
        } else {
            let sender = try SenderSession(suite: suite, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
            parameters = sender.parameters
            chainKeys = try sender.internetChainKeys(bluetoothUUID: identifier)
        }
        let keyID = InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)

        let date = GoldenVectors.fixedDate
        var hostPlaintexts: [Plaintext] = []
        let operations = Array(SampleNotifications.demo(now: date).prefix(3)) + [.remove(source: "com.apple.MobileSMS", id: "msg-4711")]
        for (offset, operation) in operations.enumerated() {
            var event = HostEvent()
            event.sequence = UInt64(offset + 1)
            event.event = try DataProvider.event(for: operation, now: date)
            hostPlaintexts.append(Plaintext(index: UInt32(offset), summary: "\(operation.summaryLine) #\(offset + 1)", bytes: WireCodec.encode(event)))
        }
        // Later indices, for the refusals: the window's edge is 50,000 past the next expected index.
        for index in [4, 5, 6, 6 + window, 6 + window + 1] as [UInt32] {
            var event = HostEvent()
            event.sequence = UInt64(index) + 1
            event.event = try DataProvider.event(for: .removeAll, now: date)
            hostPlaintexts.append(Plaintext(index: index, summary: "remove all #\(index + 1)", bytes: WireCodec.encode(event)))
        }
        var receipt = AccessoryEvent()
        receipt.sequence = 1
        receipt.receipt = .with {
            $0.hostSequence = 1
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-4711")
            $0.stored = true
            $0.alerted = true
        }

        let hostMessages = try messages(chainKey: chainKeys.hostToAccessory, number: 1, keyID: keyID, plaintexts: hostPlaintexts)
        let receiptMessages = try messages(
            chainKey: chainKeys.accessoryToHost, number: 2, keyID: keyID,
            plaintexts: [Plaintext(index: 0, summary: "receipt for #1", bytes: WireCodec.encode(receipt))]
        )
        let file = File(
            description: "NotifBridge internet-transport ratchet vectors: an X-Wing exchange with the golden accessory key, the chain keys it exports, the first ratchet steps, messages sealed under fixed nonces, and the outcomes a receiver must give for a delivery order with reordering, replays and every refusal, up to the window's edge.",
            suite: suite.rawValue,
            version: parameters.version,
            identifier: identifier,
            bluetoothUUID: identifier,
            accessorySecret: hexString(secret),
            accessoryPublicKey: hexString(key.publicKeyRepresentation),
            internetKeyID: hexString(keyID),
            encapsulatedKey: hexString(parameters.encapsulatedKey),
            chains: [
                chain(.hostToAccessory, chainKey: chainKeys.hostToAccessory, bluetoothUUID: identifier, messages: hostMessages, deliveries: try hostDeliveries(hostMessages)),
                chain(
                    .accessoryToHost, chainKey: chainKeys.accessoryToHost, bluetoothUUID: identifier, messages: receiptMessages,
                    deliveries: [Delivery(0, "opened"), Delivery(0, "replayed")]
                ),
            ]
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    /// How far ahead of the next expected index a receiver takes a message (§10.4).
    static let window = UInt32(InternetRatchet.maxSkippedKeys)

    struct Plaintext {
        var index: UInt32
        var summary: String
        var bytes: [UInt8]
    }

    /// The host's deliveries: reordering and replays, then each refusal of §10.4 once, a forgery
    /// that must change nothing, and the window's edge, where keeping one key more drops the
    /// oldest.
    private static func hostDeliveries(_ sealed: [Sealed]) throws -> [Delivery] {
        func message(_ index: UInt32) throws -> RatchetMessage {
            guard let found = sealed.first(where: { $0.message.messageIndex == index }) else { throw VectorError("no message \(index)") }
            return found.message
        }
        func tampered(_ index: UInt32) throws -> Data {
            var bytes = try message(index).serialized
            bytes[bytes.index(before: bytes.endIndex)] ^= 0x01
            return bytes
        }
        let four = try message(4)
        let edge = 6 + window
        var foreignKeyID = four
        foreignKeyID.keyID[0] ^= 0xff
        var lastIndex = four
        lastIndex.messageIndex = .max
        return [
            Delivery(0, "opened"), Delivery(2, "opened"), Delivery(1, "opened"), Delivery(1, "replayed"),
            Delivery(3, "opened"), Delivery(3, "replayed"),
            Delivery(0, "malformed", message: try message(0).serialized.prefix(InternetRatchet.minimumMessageLength - 1), note: "message 0 cut to 35 bytes, one short of the shortest message"),
            Delivery(4, "unknownKeyID", message: foreignKeyID.serialized, note: "message 4 under another key ID"),
            Delivery(4, "decryptFailed", message: try tampered(4), note: "message 4 with the low bit of its last byte (the tag's) flipped: the next expected index stays 4"),
            Delivery(5, "opened", note: "skips 4, whose key is kept"),
            Delivery(4, "decryptFailed", message: try tampered(4), note: "a forgery of a skipped index: its kept key must stay"),
            Delivery(edge + 1, "tooFarAhead", note: "50,001 ahead of the next expected index, 6"),
            Delivery(.max, "tooFarAhead", message: lastIndex.serialized, note: "index 0xffffffff, which no sender uses; the body is message 4's"),
            Delivery(edge, "decryptFailed", message: try tampered(edge), note: "a forgery at the window's edge: nothing changes"),
            Delivery(edge, "opened", note: "50,000 ahead, the most a receiver takes: keeping 6 to 50,005 makes 50,001 kept keys, so the oldest, 4's, is dropped"),
            Delivery(4, "replayed", note: "its key was dropped"),
            Delivery(6, "opened", note: "a kept key"),
            Delivery(edge, "replayed"),
        ]
    }

    struct Sealed {
        var plaintext: Plaintext
        var message: RatchetMessage
    }

    /// Seals each plaintext at its index (ascending), stepping the chain over the indices between.
    private static func messages(chainKey: Data, number: UInt8, keyID: [UInt8], plaintexts: [Plaintext]) throws -> [Sealed] {
        var key = chainKey
        var index: UInt32 = 0
        var sealed: [Sealed] = []
        for plaintext in plaintexts {
            while index < plaintext.index {
                key = InternetRatchet.step(chainKey: key, index: index).nextChainKey
                index += 1
            }
            var ratchet = try SendingRatchet(chainKey: key, nextIndex: index)
            let nonce = nonce(chain: number, index: index)
            sealed.append(Sealed(plaintext: plaintext, message: try ratchet.seal(plaintext.bytes, keyID: keyID, nonces: NonceSource { nonce })))
            key = ratchet.chainKeyBytes
            index = ratchet.nextIndex
        }
        return sealed
    }

    private static func chain(_ direction: Direction, chainKey: Data, bluetoothUUID: String, messages: [Sealed], deliveries: [Delivery]) -> Chain {
        var steps: [Step] = []
        var key = chainKey
        for index in UInt32(0)..<4 {
            let (messageKey, next) = InternetRatchet.step(chainKey: key, index: index)
            steps.append(Step(index: index, info: hexString(InternetRatchet.stepInfo(index: index)), messageKey: hexString(messageKey), nextChainKey: hexString(next)))
            key = next
        }
        return Chain(
            direction: direction.rawValue,
            exportContext: InternetRatchet.exportContext(bluetoothUUID: bluetoothUUID, direction: direction),
            chainKey: hexString(chainKey),
            steps: steps,
            messages: messages.map {
                Message(
                    index: $0.message.messageIndex, summary: $0.plaintext.summary, nonce: hexString($0.message.sealed.prefix(FeatureCipher.nonceLength)),
                    plaintext: hexString($0.plaintext.bytes), message: hexString($0.message.serialized)
                )
            },
            deliveries: deliveries
        )
    }

    public static func load(from url: URL) throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }
}

/// Why a vector file could not be made.
public struct VectorError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
