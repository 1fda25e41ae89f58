import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The transport-security extension's logic (`AccessoryTransportSecurity`), with no IO: it
/// carries the accessory's public key to the system as a `SecurityMessage(.publicKey)`, and the
/// system's encapsulated key and identifier back to the accessory as KeyMaterial, verbatim.
///
/// It also remembers the last confirmed exchange, so a reconnect can ask to resume it instead
/// of making the system encapsulate again. The iOS adapter persists `resume` and wipes it in
/// `sessionInvalidated`.
public struct SecurityRelay: Sendable {
    public struct Resume: Sendable, Hashable {
        public var keyID: Data
        public var exchangeID: UInt64

        public init(keyID: Data, exchangeID: UInt64) {
            self.keyID = keyID
            self.exchangeID = exchangeID
        }
    }

    /// The key exchange on this link, as the relay has seen it so far.
    public enum Stage: Sendable, Hashable {
        case idle
        /// Hello sent; a KeyOffer, or the KeyConfirm of a resumption, is expected.
        case helloSent
        /// The accessory's key went to the system; its encapsulated key is awaited.
        case offered(keyID: Data)
        /// KeyMaterial sent; its KeyConfirm is awaited.
        case materialSent(keyID: Data, exchangeID: UInt64)
        case established(Resume)
    }

    /// Why the relay will not carry a message; the link cannot continue.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public enum Confirmation: Sendable, Hashable {
        case established(exchangeID: UInt64, resumed: Bool)
        /// Names an exchange this relay has since replaced: ignore it.
        case superseded
    }

    public let suites: [CipherSuite]
    public private(set) var resume: Resume?
    public private(set) var stage: Stage = .idle
    /// KeyOffer.max_message_length of the key being exchanged, or the protocol default.
    public private(set) var maxMessageLength = WireLimits.defaultMaxMessageLength

    public init(suites: [CipherSuite], resume: Resume? = nil) {
        self.suites = suites
        self.resume = resume
    }

    /// - Parameter resumingOnly: when given, the held exchange is offered for resuming only if
    ///   it was made with this key (a link told which key it must reach).
    public mutating func hello(maxChunkLength: Int, resumingOnly keyID: Data? = nil) -> LinkMessage {
        stage = .helloSent
        var message = LinkMessage()
        message.hello = .with {
            $0.protocolVersion = notifBridgeProtocolVersion
            $0.cipherSuites = suites.map(\.rawValue)
            $0.maxChunkLength = UInt32(maxChunkLength)
            if let resume, keyID == nil || resume.keyID == keyID {
                $0.resume = .with {
                    $0.keyID = resume.keyID
                    $0.exchangeID = resume.exchangeID
                }
            }
        }
        return message
    }

    public mutating func linkClosed() {
        stage = .idle
    }

    /// The accessory asked to re-key: never resume that exchange. Returns false while our
    /// KeyMaterial is in flight, because a message sent earlier can draw a second Resync that
    /// must not start another exchange.
    public mutating func resync() -> Bool {
        resume = nil
        if case .materialSent = stage { return false }
        stage = .helloSent
        return true
    }

    /// A KeyOffer becomes the system's `SecurityMessage(.publicKey)`; nil when this key was
    /// already answered and its KeyConfirm is on the way.
    public mutating func keyOffer(_ offer: Notifbridge_V1_KeyOffer) throws(Refusal) -> SecurityMessage? {
        if case .materialSent(let keyID, _) = stage, keyID == offer.keyID { return nil }
        guard let suite = CipherSuite(wireName: offer.cipherSuite), suites.contains(suite) else {
            throw Refusal(description: "accessory offers \(offer.cipherSuite), which this host does not accept")
        }
        guard offer.keyID == Data(shortDigest(offer.publicKey)) else {
            throw Refusal(description: "KeyOffer key_id does not match its public key")
        }
        stage = .offered(keyID: offer.keyID)
        maxMessageLength = offer.maxMessageLength > 0 ? Int(offer.maxMessageLength) : WireLimits.defaultMaxMessageLength
        return SecurityMessage(keyType: .publicKey, cipherSuite: suite.rawValue, version: offer.version.isEmpty ? CipherSuite.versionName : offer.version, key: offer.publicKey)
    }

    /// The system's answer becomes KeyMaterial, its strings forwarded exactly as received.
    public mutating func encapsulatedKey(_ message: SecurityMessage) throws(Refusal) -> LinkMessage {
        guard message.keyType == .encapsulatedKey else {
            throw Refusal(description: "the system sent a \(message.keyType) where an encapsulated key belongs")
        }
        guard case .offered(let keyID) = stage else {
            throw Refusal(description: "an encapsulated key arrived with no key offer outstanding")
        }
        let parameters = KeyExchangeParameters(cipherSuite: message.cipherSuite, version: message.version, identifier: message.identifier ?? "", encapsulatedKey: message.key)
        stage = .materialSent(keyID: keyID, exchangeID: parameters.exchangeID)
        var link = LinkMessage()
        link.keyMaterial = .with {
            $0.cipherSuite = parameters.cipherSuite
            $0.version = parameters.version
            $0.encapsulatedKey = parameters.encapsulatedKey
            $0.identifier = parameters.identifier
            $0.keyID = keyID
        }
        return link
    }

    public mutating func keyConfirm(_ confirm: Notifbridge_V1_KeyConfirm) throws(Refusal) -> Confirmation {
        switch stage {
        case .materialSent(let keyID, let exchangeID) where exchangeID == confirm.exchangeID && !confirm.resumed:
            let agreed = Resume(keyID: keyID, exchangeID: exchangeID)
            resume = agreed
            stage = .established(agreed)
            return .established(exchangeID: exchangeID, resumed: false)
        case .helloSent where confirm.resumed && resume?.exchangeID == confirm.exchangeID:
            guard let resume else { return .superseded }
            stage = .established(resume)
            return .established(exchangeID: resume.exchangeID, resumed: true)
        case .materialSent, .established, .offered:
            return .superseded
        case .helloSent, .idle:
            throw Refusal(description: "KeyConfirm for exchange \(exchangeHex(confirm.exchangeID)) was not expected")
        }
    }
}
