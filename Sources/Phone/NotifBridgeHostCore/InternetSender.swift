import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// What the iOS system keeps after an X-Wing exchange to reach the accessory over the internet
/// (docs/PROTOCOL.md §11): the key ID, each direction's chain key and next index, and the data
/// provider's next sequence number, which outlives the links that carried the exchange.
/// Encoded as JSON by the simulated iPhone; the iOS adapter keeps it in the keychain.
public struct InternetPairing: Sendable, Hashable, Codable {
    public var exchangeID: UInt64
    public var sessionID: UUID
    /// `InternetRatchet.keyID(publicKey:)` of the accessory's key.
    public var keyID: [UInt8]
    public var sending: Chain
    /// The accessory → host chain, for replies that arrive as pushes.
    public var receiving: Chain
    public var nextSequence: UInt64

    public struct Chain: Sendable, Hashable, Codable {
        public var chainKey: Data
        public var nextIndex: UInt32

        public init(chainKey: Data, nextIndex: UInt32 = 0) {
            self.chainKey = chainKey
            self.nextIndex = nextIndex
        }
    }

    public init(exchangeID: UInt64, sessionID: UUID, keyID: [UInt8], sending: Chain, receiving: Chain, nextSequence: UInt64) {
        self.exchangeID = exchangeID
        self.sessionID = sessionID
        self.keyID = keyID
        self.sending = sending
        self.receiving = receiving
        self.nextSequence = nextSequence
    }

    /// The internet keys of an exchange the iPhone completed; nil for P-256, which Apple's
    /// internet transport does not take.
    public init?(_ pairing: HostSession.Pairing, configuration: HostSession.Configuration, nextSequence: UInt64) throws(CryptoError) {
        guard CipherSuite(wireName: pairing.sender.parameters.cipherSuite) == .xWing else { return nil }
        let keys = try pairing.sender.internetChainKeys(bluetoothUUID: configuration.identifier)
        self.init(
            exchangeID: pairing.exchangeID,
            sessionID: configuration.sessionID,
            keyID: InternetRatchet.keyID(publicKey: pairing.accessoryPublicKey),
            sending: Chain(chainKey: keys.hostToAccessory),
            receiving: Chain(chainKey: keys.accessoryToHost),
            nextSequence: max(nextSequence, 1)
        )
    }
}

/// The system's side of the internet transport for events, with no IO: it numbers an operation
/// as the data provider does and seals it with the next key of the host → accessory ratchet.
/// Each `seal` returns the pairing as it must be saved **before** the message is handed to the
/// transport, so that a crash after sending can never reuse a message key (§11.3).
public struct InternetSender: Sendable {
    public private(set) var pairing: InternetPairing

    public init(pairing: InternetPairing) {
        self.pairing = pairing
    }

    public struct Sealed: Sendable, Hashable {
        public var sequence: UInt64
        /// `keyID ‖ LE32(index) ‖ nonce ‖ ciphertext ‖ tag`: what is posted to the relay.
        public var message: Data
        public var messageIndex: UInt32
    }

    /// Seals `operation` under the next sequence number and message index, and uses both up.
    public mutating func seal(_ operation: HostOperation, now: Date, nonces: NonceSource = .system) throws -> Sealed {
        let forwarder = NotificationsForwarder(nextSequence: pairing.nextSequence)
        let outbound = try forwarder.serialize(operation, now: now)
        return try seal(outbound, nonces: nonces)
    }

    /// Seals an event the data provider already numbered (one sent before over a link and not
    /// yet acknowledged keeps its number, so the accessory's ledger knows it).
    public mutating func seal(_ outbound: NotificationsForwarder.Outbound, nonces: NonceSource = .system) throws -> Sealed {
        var ratchet = try SendingRatchet(chainKey: pairing.sending.chainKey, nextIndex: pairing.sending.nextIndex)
        let message = try ratchet.seal(outbound.plaintext, keyID: pairing.keyID, nonces: nonces)
        pairing.sending = InternetPairing.Chain(chainKey: ratchet.chainKeyBytes, nextIndex: ratchet.nextIndex)
        pairing.nextSequence = max(pairing.nextSequence, outbound.sequence + 1)
        return Sealed(sequence: outbound.sequence, message: message.serialized, messageIndex: message.messageIndex)
    }
}
