import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The iPhone's side of one accessory link, with no IO: the emulated iOS system driving the
/// three extensions' logic as iOS does.
///
/// - `NotificationsForwarder` (data provider) numbers and serialises each call;
/// - the system seals it with the HPKE sender of the current exchange (one feature session);
/// - `TransportRelay` carries the ciphertext, and the system retries on `.transportFailed`;
/// - `SecurityRelay` carries the key exchange, and remembers it for a resumption.
///
/// One link at a time. Whatever the data provider sent that has no receipt yet is sent again,
/// with its original sequence number, each time a link is established: the accessory's ledger
/// drops the copies it already stored and acknowledges them again.
public struct HostSession: Sendable {
    public struct Configuration: Sendable {
        /// Suites the host accepts, in preference order.
        public var suites: [CipherSuite]
        /// What iOS supplies as `SecurityMessage.identifier`: the accessory's Bluetooth identifier.
        public var identifier: String
        /// The notification feature's transport session UUID (the HPKE feature ID).
        public var sessionID: UUID

        public init(suites: [CipherSuite] = [.xWing, .p256], identifier: String, sessionID: UUID) {
            self.suites = suites
            self.identifier = identifier
            self.sessionID = sessionID
        }

        public var featureID: String { sessionID.uuidString }
    }

    /// What iOS keeps after an exchange: the HPKE sender whose exports key every message.
    public struct Pairing: Sendable {
        public var accessoryKeyID: Data
        /// The accessory's public key as offered: its hash names the internet keys (§11.2).
        public var accessoryPublicKey: Data
        public var sender: SenderSession
        public var exchangeID: UInt64 { sender.parameters.exchangeID }

        public init(accessoryKeyID: Data, accessoryPublicKey: Data, sender: SenderSession) {
            self.accessoryKeyID = accessoryKeyID
            self.accessoryPublicKey = accessoryPublicKey
            self.sender = sender
        }
    }

    public typealias Receipt = NotificationsForwarder.Receipt

    public enum Action: Sendable {
        /// A link message of the relays (key exchange, feature binding).
        case send(LinkMessage)
        /// A sealed event: report its transport completion with `transportCompleted`.
        case transmit(LinkMessage, sequence: UInt64)
        /// Keys agreed; `resumed` when an earlier exchange was reused.
        case established(exchangeID: UInt64, suite: String, resumed: Bool)
        case receipt(Receipt)
        case response(NotificationResponse)
        case removeOnPhone([NotificationsForwarder.NotificationID])
        case resync(Notifbridge_V1_Resync.Reason)
        case peerError(Notifbridge_V1_LinkError)
        case close(reason: String)
    }

    /// How often the system retries a message whose transport failed while the link stayed up;
    /// after that it waits for the next link.
    public static let maxTransportRetries = 3

    public let configuration: Configuration
    /// The accessory key this link must reach, when the caller knows it (a DNS-SD record's key
    /// ID, which anyone on the network can publish): a KeyOffer of any other key, or a resumed
    /// exchange made with one, closes the link before anything is sealed to it. Set per link.
    public var requiredAccessoryKeyID: Data?
    public private(set) var pairing: Pairing?
    public private(set) var forwarder: NotificationsForwarder
    private var security: SecurityRelay
    private var transport: TransportRelay
    private var candidate: Pairing?
    private var retries: [UInt64: Int] = [:]
    private let makeSender: @Sendable (CipherSuite, Data, String) throws(CryptoError) -> SenderSession
    private let nonces: NonceSource

    /// - Parameters:
    ///   - makeSender: HPKE encapsulation, whose ephemeral key is random (injected randomness).
    ///   - nonces: where the nonces of sealed events come from (injected randomness).
    public init(
        configuration: Configuration,
        forwarder: NotificationsForwarder = NotificationsForwarder(),
        makeSender: @escaping @Sendable (CipherSuite, Data, String) throws(CryptoError) -> SenderSession = { suite, key, identifier throws(CryptoError) in
            try SenderSession(suite: suite, accessoryPublicKey: key, identifier: identifier)
        },
        nonces: NonceSource = .system
    ) {
        self.configuration = configuration
        self.forwarder = forwarder
        self.makeSender = makeSender
        self.nonces = nonces
        security = SecurityRelay(suites: configuration.suites)
        transport = TransportRelay(sessionID: configuration.sessionID)
    }

    public var isEstablished: Bool {
        if case .established = security.stage { return true }
        return false
    }

    /// Events the accessory has not acknowledged yet.
    public var outstandingCount: Int { forwarder.unacknowledgedCount }

    // MARK: Link events

    /// A link told which key it must reach does not ask to resume an exchange made with
    /// another: the accessory would confirm it, and the link would have to be refused.
    public mutating func connected(maxChunkLength: Int) -> [Action] {
        [.send(security.hello(maxChunkLength: maxChunkLength, resumingOnly: requiredAccessoryKeyID))]
    }

    public mutating func disconnected() {
        security.linkClosed()
        transport.linkClosed()
        retries.removeAll()
    }

    public mutating func received(_ message: LinkMessage) -> [Action] {
        do throws(SecurityRelay.Refusal) {
            switch message.body {
            case .keyOffer(let offer): return try receivedKeyOffer(offer)
            case .keyConfirm(let confirm): return try receivedKeyConfirm(confirm)
            case .sealed(let sealed): return receivedSealed(sealed)
            case .resync(let resync):
                pairing = nil
                return security.resync() ? [.resync(resync.reason)] : []
            case .error(let error): return [.peerError(error)]
            case .hello, .keyMaterial, .bindFeature, nil:
                return [.close(reason: "accessory sent \(message.kindName), which travels host → accessory")]
            }
        } catch {
            return [.close(reason: error.description)]
        }
    }

    /// The security relay hands the accessory's key to the system, which encapsulates to it and
    /// hands the result back for the relay to forward.
    private mutating func receivedKeyOffer(_ offer: Notifbridge_V1_KeyOffer) throws(SecurityRelay.Refusal) -> [Action] {
        // Before the relay takes anything from the offer (its maximum message length, for one):
        // an accessory with another key changes nothing.
        if let refusal = unwanted(offer.keyID) { return refuse(refusal) }
        guard let publicKey = try security.keyOffer(offer), let suite = CipherSuite(wireName: publicKey.cipherSuite) else { return [] }
        let sender: SenderSession
        do {
            sender = try makeSender(suite, publicKey.key, configuration.identifier)
        } catch {
            return [.close(reason: "cannot encapsulate to the offered key: \(error)")]
        }
        candidate = Pairing(accessoryKeyID: offer.keyID, accessoryPublicKey: publicKey.key, sender: sender)
        let parameters = sender.parameters
        let answer = SecurityMessage(keyType: .encapsulatedKey, cipherSuite: parameters.cipherSuite, version: parameters.version, key: parameters.encapsulatedKey, identifier: parameters.identifier)
        return [.send(try security.encapsulatedKey(answer))]
    }

    private mutating func receivedKeyConfirm(_ confirm: Notifbridge_V1_KeyConfirm) throws(SecurityRelay.Refusal) -> [Action] {
        guard case .established(let exchangeID, let resumed) = try security.keyConfirm(confirm) else { return [] }
        guard let confirmed = resumed ? pairing : candidate else {
            return [.close(reason: "exchange \(exchangeHex(exchangeID)) confirmed without keys")]
        }
        if let refusal = unwanted(confirmed.accessoryKeyID) { return refuse(refusal) }
        pairing = confirmed
        candidate = nil
        var actions: [Action] = [
            .established(exchangeID: exchangeID, suite: confirmed.sender.parameters.cipherSuite, resumed: resumed),
            .send(transport.bind()),
        ]
        // The data provider's events without a receipt go again, in order, under their numbers.
        for outbound in forwarder.unacknowledged {
            actions += transmit(outbound)
        }
        return actions
    }

    /// Why a key is not the one this link must reach, if it is not.
    private func unwanted(_ keyID: Data) -> String? {
        guard let wanted = requiredAccessoryKeyID, keyID != wanted else { return nil }
        return "the accessory's key \(hexString(keyID)) is not the one asked for (\(hexString(wanted))); nothing was sent to it"
    }

    /// Ends the link as the session sees it at once, so a send racing the close only queues.
    private mutating func refuse(_ reason: String) -> [Action] {
        disconnected()
        return [.close(reason: reason)]
    }

    /// The transport relay hands the accessory's ciphertext to the system, which decrypts it for
    /// the data provider's `messageHandler`.
    private mutating func receivedSealed(_ sealed: Notifbridge_V1_Sealed) -> [Action] {
        guard isEstablished, var pairing, let message = transport.inbound(sealed) else {
            return [.close(reason: "Sealed before the key exchange completed, or for an unknown feature")]
        }
        let inbound: NotificationsForwarder.Inbound?
        do {
            let keys = try pairing.sender.featureKeys(featureID: configuration.featureID)
            let plaintext = try FeatureCipher.open(message.data, using: keys.accessoryToHost)
            inbound = try forwarder.messageHandler(plaintext)
        } catch {
            return [.close(reason: "accessory message does not decrypt: \(error)")]
        }
        self.pairing = pairing
        switch inbound {
        case .receipt(let receipt):
            retries[receipt.sequence] = nil
            return [.receipt(receipt)]
        case .response(let response): return [.response(response)]
        case .removeOnPhone(let ids): return [.removeOnPhone(ids)]
        case nil: return []
        }
    }

    // MARK: Sending

    /// `session.send(message:)` for one data-provider call: numbered and serialised by the
    /// forwarder, then sealed and transmitted at once when a link is established, or held
    /// until one is. Throws when the accessory could never accept it, using no number.
    public mutating func send(_ operation: HostOperation, now: Date) throws(AccessoryError) -> (sequence: UInt64, actions: [Action]) {
        let outbound: NotificationsForwarder.Outbound
        do {
            outbound = try forwarder.serialize(operation, now: now)
        } catch {
            throw .notificationTooLarge(error.description)
        }
        try checkFitsLink(outbound)
        forwarder.sent(outbound)
        return (outbound.sequence, isEstablished ? transmit(outbound) : [])
    }

    /// Every event must fit the link, even one sent over the internet first: the link carries
    /// it again, and the internet's limit counts the plaintext alone (PROTOCOL §10.3), so an
    /// event up to 38 bytes over the link's would be refused there after every re-key.
    private func checkFitsLink(_ outbound: NotificationsForwarder.Outbound) throws(AccessoryError) {
        let length = TransportRelay.sealedLength(ciphertextLength: outbound.plaintext.count + FeatureCipher.overhead)
        guard length <= security.maxMessageLength else {
            throw .notificationTooLarge("the sealed event is \(length) bytes; the accessory accepts at most \(security.maxMessageLength)")
        }
    }

    /// Numbers and records one data-provider call as sent without sealing it for the link: the
    /// system is sending it over the internet. It stays unacknowledged, so the next link that is
    /// established carries it again under the same number, and the accessory's receipt for that
    /// copy (its ledger stores it once) settles it.
    public mutating func hold(_ operation: HostOperation, now: Date) throws(AccessoryError) -> NotificationsForwarder.Outbound {
        let outbound: NotificationsForwarder.Outbound
        do {
            outbound = try forwarder.serialize(operation, now: now)
        } catch {
            throw .notificationTooLarge(error.description)
        }
        try checkFitsLink(outbound)
        forwarder.sent(outbound)
        return outbound
    }

    /// The transport relay's completion for a sealed event.
    public mutating func transportCompleted(sequence: UInt64, result: AccessoryMessageResult) -> [Action] {
        guard case .failure(.transportFailed) = result, isEstablished,
              let outbound = forwarder.unacknowledged(sequence) else { return [] }
        let attempts = retries[sequence, default: 0] + 1
        guard attempts <= Self.maxTransportRetries else { return [] }
        retries[sequence] = attempts
        return transmit(outbound)
    }

    private mutating func transmit(_ outbound: NotificationsForwarder.Outbound) -> [Action] {
        guard let ciphertext = encrypt(outbound.plaintext),
              let message = try? transport.outbound(TransportMessage(sessionID: configuration.sessionID, data: ciphertext)) else { return [] }
        return [.transmit(message, sequence: outbound.sequence)]
    }

    /// Seals one event as the iOS system would; exposed so tests can tamper with the result.
    public mutating func seal(_ event: HostEvent.OneOf_Event, sequence: UInt64) -> LinkMessage? {
        var hostEvent = HostEvent()
        hostEvent.sequence = sequence
        hostEvent.event = event
        return encrypt(Data(WireCodec.encode(hostEvent))).map(TransportRelay.sealed)
    }

    private mutating func encrypt(_ plaintext: Data) -> Data? {
        guard var pairing else { return nil }
        defer { self.pairing = pairing }
        guard let keys = try? pairing.sender.featureKeys(featureID: configuration.featureID) else { return nil }
        return try? FeatureCipher.seal(plaintext, using: keys.hostToAccessory, nonces: nonces)
    }
}
