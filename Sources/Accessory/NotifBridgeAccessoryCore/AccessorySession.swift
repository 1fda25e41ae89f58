import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The accessory's side of one link connection, as a state machine with no IO: link messages in,
/// actions out. The driver (TCP or BLE) carries the actions out in order.
///
/// States: waiting for Hello → key offered → established. A decrypt failure drops the exchange,
/// rotates to a fresh key and offers it again (Apple's resync rule).
public struct AccessorySession: Sendable {
    /// How this link may be used: local-network links refuse P-256 (Apple's rule).
    public struct Configuration: Sendable {
        public var allowsP256: Bool
        public var transports: [Notifbridge_V1_Transport]
        public var limits: WireLimits

        public init(allowsP256: Bool, transports: [Notifbridge_V1_Transport], limits: WireLimits = .default) {
            self.allowsP256 = allowsP256
            self.transports = transports
            self.limits = limits
        }
    }

    /// A completed exchange that an earlier connection (or process) persisted.
    public struct Exchange: Sendable {
        public var parameters: KeyExchangeParameters
        public init(parameters: KeyExchangeParameters) { self.parameters = parameters }
    }

    public typealias Action = AccessoryAction<LinkMessage>

    /// A decrypted, validated host event and where it came from.
    public struct Delivery: Sendable {
        public var event: HostEvent
        public var exchangeID: UInt64
        public var featureID: String

        public init(event: HostEvent, exchangeID: UInt64, featureID: String) {
            self.event = event
            self.exchangeID = exchangeID
            self.featureID = featureID
        }
    }

    private enum State: Sendable {
        /// Connected; nothing received yet.
        case awaitingHello
        /// KeyOffer sent; waiting for KeyMaterial.
        case offered
        /// Keys agreed; sealed messages flow.
        case established(Established)
        /// The connection is over; every event is ignored.
        case closed
    }

    private struct Established: Sendable {
        var recipient: RecipientSession
        var features: [UInt32: String] = [:]
        var outboundSequence: UInt64 = 0
        /// The feature the host last bound or used: where replies from the accessory go.
        var currentFeatureID: String?
    }

    /// Where the accessory's own messages (responses, removals) go on this connection.
    public var currentFeatureID: String? {
        if case .established(let established) = state { return established.currentFeatureID }
        return nil
    }

    public let configuration: Configuration
    public private(set) var identity: AccessoryPrivateKey
    private var exchange: Exchange?
    private var state: State = .awaitingHello
    private let makeKey: @Sendable (CipherSuite) throws(CryptoError) -> AccessoryPrivateKey
    private let nonces: NonceSource

    /// - Parameters:
    ///   - identity: the accessory's persisted private key.
    ///   - exchange: the persisted exchange, if any, which a host may resume.
    ///   - makeKey: where fresh keys come from after a decrypt failure (injected randomness).
    ///   - nonces: where the nonces of sealed replies come from (injected randomness).
    public init(
        identity: AccessoryPrivateKey,
        exchange: Exchange?,
        configuration: Configuration,
        makeKey: @escaping @Sendable (CipherSuite) throws(CryptoError) -> AccessoryPrivateKey = AccessoryPrivateKey.generate,
        nonces: NonceSource = .system
    ) {
        self.identity = identity
        self.exchange = exchange
        self.configuration = configuration
        self.makeKey = makeKey
        self.nonces = nonces
    }

    /// True until a Hello has been taken (or the connection closed).
    public var isAwaitingHello: Bool {
        if case .awaitingHello = state { true } else { false }
    }

    public var isEstablished: Bool {
        switch state {
        case .established: true
        case .awaitingHello, .offered, .closed: false
        }
    }

    /// The exchange this connection decrypts with, once established.
    public var exchangeID: UInt64? {
        switch state {
        case .established(let established): established.recipient.parameters.exchangeID
        case .awaitingHello, .offered, .closed: nil
        }
    }

    // MARK: Inbound

    public mutating func received(_ message: LinkMessage) -> [Action] {
        if case .closed = state { return [] }
        switch message.body {
        case .hello(let hello): return receivedHello(hello)
        case .keyMaterial(let material): return receivedKeyMaterial(material)
        case .bindFeature(let bind): return receivedBindFeature(bind)
        case .sealed(let sealed): return receivedSealed(sealed)
        case .error:
            return []  // the host reports a problem; nothing to answer
        case .keyOffer, .keyConfirm, .resync:
            return [.send(.linkError(.unexpected, "\(message.kindName) travels accessory → host only"))]
        case nil:
            return [.send(.linkError(.malformed, "message with no body"))]
        }
    }

    /// Bytes that did not reassemble or decode: answer with the reason and carry on.
    public mutating func receivedInvalid(_ error: WireError) -> [Action] {
        if case .closed = state { return [] }
        return [.send(.linkError(Self.linkErrorCode(error), error.description))]
    }

    private static func linkErrorCode(_ error: WireError) -> Notifbridge_V1_LinkError.Code {
        switch error.code {
        case .tooLarge, .tooManyPartialMessages: .tooLarge
        case .malformedChunk, .malformedMessage, .unknownMessageID, .lengthMismatch: .malformed
        }
    }

    public mutating func disconnected() {
        state = .closed
    }

    private mutating func receivedHello(_ hello: Notifbridge_V1_Hello) -> [Action] {
        guard hello.protocolVersion == notifBridgeProtocolVersion else {
            state = .closed
            return [
                .send(.linkError(.unsupportedVersion, "protocol version \(hello.protocolVersion) is not supported; this accessory speaks \(notifBridgeProtocolVersion)")),
                .close(reason: "unsupported protocol version \(hello.protocolVersion)"),
            ]
        }
        let suite = identity.suite
        guard hello.cipherSuites.count <= Self.maxHelloSuites, hello.cipherSuites.allSatisfy({ $0.utf8.count <= Self.maxSuiteNameLength }) else {
            state = .closed
            return [
                .send(.linkError(.tooLarge, "Hello lists \(hello.cipherSuites.count) cipher suites; at most \(Self.maxHelloSuites) names of \(Self.maxSuiteNameLength) bytes")),
                .close(reason: "oversized Hello"),
            ]
        }
        if !hello.cipherSuites.isEmpty, !hello.cipherSuites.contains(where: { CipherSuite(wireName: $0) == suite }) {
            state = .closed
            return [
                .send(.linkError(.unsupportedSuite, "the host accepts \(hello.cipherSuites.joined(separator: ", ")); this accessory's key is \(suite.rawValue)")),
                .close(reason: "no common cipher suite"),
            ]
        }
        if hello.hasResume, let exchange, hello.resume.keyID == Data(identity.keyID),
            hello.resume.exchangeID == exchange.parameters.exchangeID,
            configuration.allowsP256 || CipherSuite(wireName: exchange.parameters.cipherSuite) != .p256,
            let recipient = try? RecipientSession(privateKey: identity, parameters: exchange.parameters)
        {
            state = .established(Established(recipient: recipient))
            return [
                .resumedExchange(exchangeID: exchange.parameters.exchangeID),
                .send(keyConfirm(exchange.parameters.exchangeID, resumed: true)),
            ]
        }
        state = .offered
        return [.send(keyOffer())]
    }

    private mutating func receivedKeyMaterial(_ material: Notifbridge_V1_KeyMaterial) -> [Action] {
        switch state {
        case .offered, .established: break
        case .awaitingHello, .closed:
            return [.send(.linkError(.unexpected, "KeyMaterial before Hello"))]
        }
        guard material.identifier.utf8.count <= Self.maxIdentifierLength,
            material.cipherSuite.utf8.count <= Self.maxSuiteNameLength,
            material.version.utf8.count <= Self.maxSuiteNameLength
        else {
            return [.send(.linkError(.tooLarge, "KeyMaterial strings over their limits: identifier \(Self.maxIdentifierLength), cipher_suite and version \(Self.maxSuiteNameLength) bytes"))]
        }
        guard material.keyID == Data(identity.keyID) else {
            state = .offered
            return [.send(.linkError(.unexpected, "KeyMaterial names a key this accessory no longer offers")), .send(keyOffer())]
        }
        if CipherSuite(wireName: material.cipherSuite) == .p256, !configuration.allowsP256 {
            state = .offered
            return [.send(.linkError(.unsupportedSuite, "P256 is refused on this link: local-network transports require XWing"))]
        }
        let parameters = KeyExchangeParameters(
            cipherSuite: material.cipherSuite,
            version: material.version,
            identifier: material.identifier,
            encapsulatedKey: material.encapsulatedKey
        )
        let recipient: RecipientSession
        do {
            recipient = try RecipientSession(privateKey: identity, parameters: parameters)
        } catch {
            state = .offered
            let code: Notifbridge_V1_LinkError.Code = error.code == .unsupportedSuite || error.code == .suiteMismatch ? .unsupportedSuite : .malformed
            return [.send(.linkError(code, error.description))]
        }
        var actions: [Action] = []
        if let old = exchange, old.parameters.exchangeID != parameters.exchangeID {
            actions.append(.forgetExchange(exchangeID: old.parameters.exchangeID))
        }
        exchange = Exchange(parameters: parameters)
        state = .established(Established(recipient: recipient))
        // Only X-Wing goes beyond Bluetooth; the identifier is the accessory's Bluetooth UUID,
        // which names the exported keys (§10.1).
        let internet = CipherSuite(wireName: parameters.cipherSuite) == .xWing
            ? (try? recipient.internetChainKeys(bluetoothUUID: parameters.identifier)).map {
                InternetRatchetStart(keyID: InternetRatchet.keyID(publicKey: identity.publicKeyRepresentation), chainKeys: $0)
            }
            : nil
        actions.append(.persistExchange(parameters, internet: internet))
        actions.append(.send(keyConfirm(parameters.exchangeID, resumed: false)))
        return actions
    }

    private mutating func receivedBindFeature(_ bind: Notifbridge_V1_BindFeature) -> [Action] {
        guard case .established(var established) = state else {
            return [.send(.linkError(.unexpected, "BindFeature before the key exchange completed"))]
        }
        guard (1...255).contains(bind.featureRef) else {
            return [.send(.linkError(.malformed, "feature_ref \(bind.featureRef) is outside 1...255"))]
        }
        guard !bind.featureID.isEmpty, bind.featureID.utf8.count <= Self.maxFeatureIDLength else {
            return [.send(.linkError(.malformed, "feature_id must be 1...\(Self.maxFeatureIDLength) bytes, got \(bind.featureID.utf8.count)"))]
        }
        established.features[bind.featureRef] = bind.featureID
        established.currentFeatureID = bind.featureID
        state = .established(established)
        return []
    }

    private mutating func receivedSealed(_ sealed: Notifbridge_V1_Sealed) -> [Action] {
        guard case .established(var established) = state else {
            // Every Resync is followed by a KeyOffer, so the host always knows what to answer.
            state = .offered
            return [.send(.linkError(.unexpected, "Sealed before the key exchange completed")), .send(resync(.unknownExchange)), .send(keyOffer())]
        }
        let featureID: String
        if sealed.featureRef != 0 {
            guard let bound = established.features[sealed.featureRef] else {
                return [.send(.linkError(.unexpected, "feature_ref \(sealed.featureRef) was never bound on this connection"))]
            }
            featureID = bound
        } else {
            guard !sealed.featureID.isEmpty, sealed.featureID.utf8.count <= Self.maxFeatureIDLength else {
                return [.send(.linkError(.malformed, "Sealed carries neither a feature_ref nor a valid feature_id"))]
            }
            featureID = sealed.featureID
        }
        let plaintext: Data
        do {
            let keys = try established.recipient.featureKeys(featureID: featureID)
            plaintext = try FeatureCipher.open(sealed.ciphertext, using: keys.hostToAccessory)
        } catch {
            return resyncAfterDecryptFailure(dropping: established.recipient.parameters.exchangeID)
        }
        established.currentFeatureID = featureID
        state = .established(established)
        let event: HostEvent
        do {
            event = try WireCodec.decode(HostEvent.self, from: plaintext)
        } catch {
            return [.refused(error), .send(.linkError(.malformed, error.description))]
        }
        do {
            try Self.validate(event)
        } catch {
            // Refused for good: a stored-false receipt stops the host from re-sending it.
            var actions: [Action] = [.refused(error), .send(.linkError(Self.linkErrorCode(error), "event #\(event.sequence): \(error.description)"))]
            if event.sequence > 0 {
                actions += seal(.receipt(.with {
                    $0.hostSequence = event.sequence
                    if let id = event.notificationID { $0.id = id }
                }), featureID: featureID)
            }
            return actions
        }
        return [.deliver(Delivery(event: event, exchangeID: established.recipient.parameters.exchangeID, featureID: featureID))]
    }

    private mutating func resyncAfterDecryptFailure(dropping exchangeID: UInt64) -> [Action] {
        exchange = nil
        state = .offered
        var actions: [Action] = [.send(resync(.decryptFailed)), .forgetExchange(exchangeID: exchangeID)]
        if let fresh = try? makeKey(identity.suite) {
            identity = fresh
            actions.append(.replaceIdentity(fresh))
        }
        actions.append(.send(keyOffer()))
        return actions
    }

    // MARK: Outbound

    /// Seals an accessory event (receipt, response, removal) for the host on the given feature.
    public mutating func seal(_ event: AccessoryEvent.OneOf_Event, featureID: String) -> [Action] {
        guard case .established(var established) = state else { return [] }
        established.outboundSequence += 1
        var message = AccessoryEvent()
        message.sequence = established.outboundSequence
        message.event = event
        do {
            let keys = try established.recipient.featureKeys(featureID: featureID)
            let ciphertext = try FeatureCipher.seal(WireCodec.encode(message), using: keys.accessoryToHost, nonces: nonces)
            state = .established(established)
            var link = LinkMessage()
            link.sealed = .with {
                if let ref = established.features.first(where: { $0.value == featureID })?.key {
                    $0.featureRef = ref
                } else {
                    $0.featureID = featureID
                }
                $0.ciphertext = ciphertext
            }
            return [.send(link)]
        } catch {
            state = .established(established)
            return []
        }
    }

    /// The store applied a delivery; send the receipt the host's addNotification waits for.
    public mutating func delivered(_ delivery: Delivery, stored: Bool, alerted: Bool) -> [Action] {
        var receipt = Notifbridge_V1_DeliveryReceipt()
        receipt.hostSequence = delivery.event.sequence
        receipt.stored = stored
        receipt.alerted = alerted
        if let id = delivery.event.notificationID { receipt.id = id }
        return seal(.receipt(receipt), featureID: delivery.featureID)
    }

    // MARK: Messages

    public static let maxFeatureIDLength = 64
    /// KeyMaterial.identifier: iOS sends a UUID string (36 bytes).
    public static let maxIdentifierLength = 64
    /// Suite and version names ("XWing", "Version1"), which go into HPKE info.
    public static let maxSuiteNameLength = 16
    /// Suite names a Hello may list.
    public static let maxHelloSuites = 4

    private func keyOffer() -> LinkMessage {
        var message = LinkMessage()
        message.keyOffer = .with {
            $0.cipherSuite = identity.suite.rawValue
            $0.version = CipherSuite.versionName
            $0.publicKey = identity.publicKeyRepresentation
            $0.transports = configuration.transports
            $0.keyID = Data(identity.keyID)
            $0.maxMessageLength = UInt32(configuration.limits.maxMessageLength)
        }
        return message
    }

    private func keyConfirm(_ exchangeID: UInt64, resumed: Bool) -> LinkMessage {
        var message = LinkMessage()
        message.keyConfirm = .with {
            $0.exchangeID = exchangeID
            $0.resumed = resumed
        }
        return message
    }

    private func resync(_ reason: Notifbridge_V1_Resync.Reason) -> LinkMessage {
        var message = LinkMessage()
        message.resync = .with { $0.reason = reason }
        return message
    }
}
