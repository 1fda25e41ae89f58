import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The iPhone's side of one accessory link, with no IO: the emulated iOS system (HPKE sender,
/// per-message encryption) together with the security and transport relays.
///
/// Events are queued in one ordered queue, so a removal never overtakes its update. Events
/// that were sent but not acknowledged by a receipt are sent again after a reconnect: with the
/// same sequence numbers when the exchange resumed (the accessory drops them as stale), or
/// renumbered under a new exchange.
public struct HostSession: Sendable {
    public struct Configuration: Sendable {
        /// Suites the host accepts, in preference order.
        public var suites: [CipherSuite]
        /// What iOS supplies as `SecurityMessage.identifier`: the accessory's Bluetooth identifier.
        public var identifier: String
        /// The notification feature's transport session UUID string (the HPKE feature ID).
        public var featureID: String

        public init(suites: [CipherSuite] = [.xWing, .p256], identifier: String, featureID: String) {
            self.suites = suites
            self.identifier = identifier
            self.featureID = featureID
        }
    }

    /// What iOS keeps after a completed exchange, so a reconnect need not repeat it.
    public struct Pairing: Sendable {
        public var accessoryKeyID: Data
        public var sender: SenderSession
        public var nextSequence: UInt64 = 1
        /// The largest message the accessory accepts (KeyOffer.max_message_length).
        public var maxMessageLength = WireLimits.defaultMaxMessageLength
        public var exchangeID: UInt64 { sender.parameters.exchangeID }
    }

    public struct Receipt: Sendable, Hashable {
        public var sequence: UInt64
        public var stored: Bool
        public var alerted: Bool
    }

    public enum Action: Sendable {
        case send(LinkMessage)
        /// Keys agreed; `resumed` when an earlier exchange was reused.
        case established(exchangeID: UInt64, suite: String, resumed: Bool)
        case receipt(Receipt)
        case accessoryEvent(AccessoryEvent)
        case resync(Notifbridge_V1_Resync.Reason)
        case peerError(Notifbridge_V1_LinkError)
        /// Not sent: the accessory could never accept it (the data provider's call throws).
        case refused(reason: String)
        case close(reason: String)
    }

    private enum State: Sendable {
        case disconnected
        /// Hello sent; KeyOffer or KeyConfirm expected.
        case helloSent
        /// KeyMaterial sent for this sender; KeyConfirm expected.
        case materialSent(Pairing)
        case established
    }

    public let configuration: Configuration
    public private(set) var pairing: Pairing?
    private var state: State = .disconnected
    private var unsent: [HostEvent.OneOf_Event] = []
    private var unacknowledged: [(sequence: UInt64, event: HostEvent.OneOf_Event)] = []
    private let makeSender: @Sendable (CipherSuite, Data, String) throws(CryptoError) -> SenderSession
    private let nonces: NonceSource
    private static let featureRef: UInt32 = 1

    /// - Parameters:
    ///   - makeSender: HPKE encapsulation, whose ephemeral key is random (injected randomness).
    ///   - nonces: where the nonces of sealed events come from (injected randomness).
    public init(
        configuration: Configuration,
        pairing: Pairing? = nil,
        makeSender: @escaping @Sendable (CipherSuite, Data, String) throws(CryptoError) -> SenderSession = { suite, key, identifier throws(CryptoError) in
            try SenderSession(suite: suite, accessoryPublicKey: key, identifier: identifier)
        },
        nonces: NonceSource = .system
    ) {
        self.configuration = configuration
        self.pairing = pairing
        self.makeSender = makeSender
        self.nonces = nonces
    }

    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Events queued or awaiting a receipt.
    public var outstandingCount: Int { unsent.count + unacknowledged.count }

    // MARK: Link events

    public mutating func connected(maxChunkLength: Int) -> [Action] {
        state = .helloSent
        var message = LinkMessage()
        message.hello = .with {
            $0.protocolVersion = notifBridgeProtocolVersion
            $0.cipherSuites = configuration.suites.map(\.rawValue)
            $0.maxChunkLength = UInt32(maxChunkLength)
            if let pairing {
                $0.resume = .with {
                    $0.keyID = pairing.accessoryKeyID
                    $0.exchangeID = pairing.exchangeID
                }
            }
        }
        return [.send(message)]
    }

    public mutating func disconnected() {
        state = .disconnected
    }

    public mutating func received(_ message: LinkMessage) -> [Action] {
        switch message.body {
        case .keyOffer(let offer): return receivedKeyOffer(offer)
        case .keyConfirm(let confirm): return receivedKeyConfirm(confirm)
        case .sealed(let sealed): return receivedSealed(sealed)
        case .resync(let resync):
            // A message already in flight can draw a second Resync while we re-key: keep the
            // exchange we are making rather than start another.
            pairing = nil
            if case .materialSent = state { return [] }
            state = .helloSent
            return [.resync(resync.reason)]
        case .error(let error): return [.peerError(error)]
        case .hello, .keyMaterial, .bindFeature, nil:
            return [.close(reason: "accessory sent \(message.kindName), which travels host → accessory")]
        }
    }

    private mutating func receivedKeyOffer(_ offer: Notifbridge_V1_KeyOffer) -> [Action] {
        if case .materialSent(let candidate) = state, candidate.accessoryKeyID == offer.keyID {
            return []  // already answered this key; its KeyConfirm is on the way
        }
        guard let suite = CipherSuite(wireName: offer.cipherSuite), configuration.suites.contains(suite) else {
            return [.close(reason: "accessory offers \(offer.cipherSuite), which this host does not accept")]
        }
        guard offer.keyID == Data(shortDigest(offer.publicKey)) else {
            return [.close(reason: "KeyOffer key_id does not match its public key")]
        }
        let sender: SenderSession
        do {
            sender = try makeSender(suite, offer.publicKey, configuration.identifier)
        } catch {
            return [.close(reason: "cannot encapsulate to the offered key: \(error)")]
        }
        var next = Pairing(accessoryKeyID: offer.keyID, sender: sender)
        if offer.maxMessageLength > 0 { next.maxMessageLength = Int(offer.maxMessageLength) }
        state = .materialSent(next)
        var message = LinkMessage()
        message.keyMaterial = .with {
            // What the security relay forwards: the system's strings, verbatim.
            $0.cipherSuite = sender.parameters.cipherSuite
            $0.version = sender.parameters.version
            $0.encapsulatedKey = sender.parameters.encapsulatedKey
            $0.identifier = sender.parameters.identifier
            $0.keyID = offer.keyID
        }
        return [.send(message)]
    }

    private mutating func receivedKeyConfirm(_ confirm: Notifbridge_V1_KeyConfirm) -> [Action] {
        let resumed: Bool
        switch state {
        case .materialSent(let candidate) where candidate.exchangeID == confirm.exchangeID && !confirm.resumed:
            // Sequence numbers belong to an exchange: a new one renumbers what is outstanding.
            requeueUnacknowledged()
            pairing = candidate
            resumed = false
        case .helloSent where confirm.resumed && pairing?.exchangeID == confirm.exchangeID:
            resumed = true
        case .materialSent, .established:
            return []  // a confirm for an exchange we have since replaced
        case .helloSent, .disconnected:
            return [.close(reason: "KeyConfirm for exchange \(exchangeHex(confirm.exchangeID)) was not expected")]
        }
        state = .established
        guard let pairing else { return [] }
        var actions: [Action] = [.established(exchangeID: pairing.exchangeID, suite: pairing.sender.parameters.cipherSuite, resumed: resumed)]
        var bind = LinkMessage()
        bind.bindFeature = .with {
            $0.featureRef = Self.featureRef
            $0.featureID = configuration.featureID
        }
        actions.append(.send(bind))
        // Same exchange: replay what was not acknowledged under its original numbers.
        for entry in unacknowledged {
            if let message = seal(entry.event, sequence: entry.sequence) { actions.append(.send(message)) }
        }
        let queued = unsent
        unsent.removeAll()
        for event in queued { actions += send(event) }
        return actions
    }

    private mutating func receivedSealed(_ sealed: Notifbridge_V1_Sealed) -> [Action] {
        guard case .established = state, var pairing else {
            return [.close(reason: "Sealed before the key exchange completed")]
        }
        let event: AccessoryEvent
        do {
            let keys = try pairing.sender.featureKeys(featureID: configuration.featureID)
            let plaintext = try FeatureCipher.open(sealed.ciphertext, using: keys.accessoryToHost)
            event = try WireCodec.decode(AccessoryEvent.self, from: plaintext)
        } catch {
            return [.close(reason: "accessory message does not decrypt: \(error)")]
        }
        self.pairing = pairing
        if case .receipt(let receipt) = event.event {
            unacknowledged.removeAll { $0.sequence == receipt.hostSequence }
            return [.receipt(Receipt(sequence: receipt.hostSequence, stored: receipt.stored, alerted: receipt.alerted))]
        }
        return [.accessoryEvent(event)]
    }

    // MARK: Sending

    /// Queues one event; it is sealed and sent at once when the link is established.
    public mutating func send(_ event: HostEvent.OneOf_Event) -> [Action] {
        guard case .established = state, let sequence = pairing?.nextSequence else {
            unsent.append(event)
            return []
        }
        guard let message = seal(event, sequence: sequence), var pairing else { return [] }
        let length = WireCodec.encode(message).count
        guard length <= pairing.maxMessageLength else {
            return [.refused(reason: "the sealed event is \(length) bytes; the accessory accepts at most \(pairing.maxMessageLength)")]
        }
        pairing.nextSequence += 1
        self.pairing = pairing
        unacknowledged.append((sequence, event))
        return [.send(message)]
    }

    /// The sequence number the next event will carry.
    public var nextSequence: UInt64? { pairing?.nextSequence }

    /// Seals one event as the iOS system would; exposed so tests can tamper with the result.
    public mutating func seal(_ event: HostEvent.OneOf_Event, sequence: UInt64) -> LinkMessage? {
        guard var pairing else { return nil }
        var hostEvent = HostEvent()
        hostEvent.sequence = sequence
        hostEvent.event = event
        do {
            let keys = try pairing.sender.featureKeys(featureID: configuration.featureID)
            let ciphertext = try FeatureCipher.seal(WireCodec.encode(hostEvent), using: keys.hostToAccessory, nonces: nonces)
            self.pairing = pairing
            var message = LinkMessage()
            message.sealed = .with {
                $0.featureRef = Self.featureRef
                $0.ciphertext = ciphertext
            }
            return message
        } catch {
            return nil
        }
    }

    /// A new exchange renumbers everything not yet acknowledged, in its original order.
    private mutating func requeueUnacknowledged() {
        unsent = unacknowledged.map(\.event) + unsent
        unacknowledged.removeAll()
    }
}
