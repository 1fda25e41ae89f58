import Crypto
import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// The accessory's connection past reassembly: `LinkMessage`s in, actions out, as the daemon
/// drives it. The accessory holds the golden vectors' keys (Tests/Vectors/golden-v1.json), so
/// seeds built from those vectors complete the key exchange and mutations start from there.
///
/// Input: one configuration byte (bit 0: P-256 key instead of X-Wing; bit 1: a Bluetooth link,
/// where P-256 is allowed), then records whose tag's low two bits pick a `Step`.
enum SessionTarget {
    enum Step: UInt8 {
        /// The body is a `LinkMessage`, sent as one chunk.
        case message = 0
        /// The body is a `HostEvent`, sealed as the host would under the current exchange (so
        /// the fuzzer reaches what follows decryption), then sent as a `Sealed` message.
        case sealedEvent = 1
        /// The link drops and the host connects again; the accessory kept its exchange.
        case reconnect = 2
        /// Time passes: the body's first byte in seconds.
        case tick = 3
    }

    /// The golden vectors' accessory keys: X-Wing from the seed 00…1f, P-256 from 01…20.
    static let identities: [AccessoryPrivateKey] = [
        goldenKey(.xWing, secret: Array(0x00...0x1F)),
        goldenKey(.p256, secret: Array(0x01...0x20)),
    ]

    private static func goldenKey(_ suite: CipherSuite, secret: [UInt8]) -> AccessoryPrivateKey {
        do {
            return try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(secret))
        } catch {
            preconditionFailure("golden \(suite) key: \(error)")
        }
    }

    /// Returns how many events reached delivery, so tests can tell that seeds get that far.
    @discardableResult
    static func run(_ bytes: [UInt8]) -> Int {
        var input = FuzzInput(bytes)
        let configuration = input.byte() ?? 0
        var driver = SessionDriver(identity: identities[Int(configuration & 1)], bluetooth: configuration & 2 != 0)
        while let (tag, body) = input.record() {
            switch Step(rawValue: tag & 3) {
            case .message: driver.send(body)
            case .sealedEvent: driver.sendSealed(body)
            case .reconnect: driver.reconnect()
            case .tick: driver.tick(seconds: Int(body.first ?? 0))
            case nil: preconditionFailure("two bits name four steps")
            }
        }
        return driver.deliveries
    }
}

/// Plays the daemon's part around one `AccessoryConnection`, and checks everything it sends.
private struct SessionDriver {
    let identity: AccessoryPrivateKey
    let configuration: AccessorySession.Configuration
    var connection: AccessoryConnection
    /// The exchange the accessory persisted last, which a new connection may resume.
    var persisted: KeyExchangeParameters?
    /// The host → accessory key of `persisted`, for sealing events as the host would.
    var hostKey: SymmetricKey?
    /// False once the accessory asked to close; records are ignored until a reconnect.
    var open = true
    var now: ContinuousClock.Instant
    var nextMessageID: UInt8 = 0
    /// Reassembles what the accessory sends, as the host would.
    var hostSide = ChunkReassembler()
    var deliveries = 0

    init(identity: AccessoryPrivateKey, bluetooth: Bool) {
        self.identity = identity
        configuration = .init(allowsP256: bluetooth, transports: [bluetooth ? .bluetooth : .localNetwork])
        now = .now
        connection = Self.connection(identity: identity, exchange: nil, configuration: configuration, now: now)
    }

    /// Fresh keys after a decrypt failure are the same golden key, and nonces are fixed, so a
    /// run depends on nothing but its input.
    static func connection(identity: AccessoryPrivateKey, exchange: KeyExchangeParameters?, configuration: AccessorySession.Configuration, now: ContinuousClock.Instant) -> AccessoryConnection {
        let session = AccessorySession(
            identity: identity,
            exchange: exchange.map(AccessorySession.Exchange.init(parameters:)),
            configuration: configuration,
            makeKey: { (_: CipherSuite) throws(NotifBridgeCrypto.CryptoError) -> AccessoryPrivateKey in identity },
            nonces: NonceSource { [UInt8](repeating: 0, count: FeatureCipher.nonceLength) }
        )
        return AccessoryConnection(session: session, chunkLength: 4096, now: now)
    }

    mutating func send(_ message: [UInt8]) {
        guard open else { return }
        nextMessageID &+= 1
        let chunk = [ChunkHeader.Flags([.first, .last]).rawValue, nextMessageID] + message
        handle(connection.received(chunk: chunk, now: now))
    }

    mutating func sendSealed(_ plaintext: [UInt8]) {
        guard let hostKey else { return }
        let ciphertext: Data
        do {
            ciphertext = try FeatureCipher.seal(plaintext, using: hostKey, nonces: NonceSource { [UInt8](repeating: 1, count: FeatureCipher.nonceLength) })
        } catch {
            preconditionFailure("sealing with a 32-byte key: \(error)")
        }
        var message = LinkMessage()
        message.sealed = .with {
            $0.featureID = SimulatorIdentity.featureID
            $0.ciphertext = ciphertext
        }
        send(WireCodec.encode(message))
    }

    mutating func reconnect() {
        connection.disconnected()
        connection = Self.connection(identity: identity, exchange: persisted, configuration: configuration, now: now)
        hostSide.reset()
        open = true
    }

    mutating func tick(seconds: Int) {
        now += .seconds(seconds)
        _ = connection.tick(now: now)
    }

    private mutating func handle(_ actions: [AccessoryConnection.Action]) {
        for action in actions {
            switch action {
            case .send(let transmission):
                checkOutbound(transmission.chunks, kind: transmission.kind)
            case .persistExchange(let parameters, _):
                persisted = parameters
                hostKey = Self.hostKey(identity: identity, parameters: parameters)
            case .resumedExchange(let exchangeID):
                precondition(persisted?.exchangeID == exchangeID, "resumed an exchange that was never persisted")
            case .deliver(let delivery):
                do {
                    try AccessorySession.validate(delivery.event)
                } catch {
                    preconditionFailure("delivered an event that validation refuses: \(error)")
                }
                deliveries += 1
                handle(connection.delivered(delivery, stored: true, alerted: delivery.event.sequence % 2 == 0))
            case .close:
                connection.disconnected()
                open = false
            case .forgetExchange, .replaceIdentity, .refused:
                break
            }
        }
    }

    /// The host's key for the feature under `parameters`: the accessory's own derivation, which
    /// HPKE makes equal to the host's.
    private static func hostKey(identity: AccessoryPrivateKey, parameters: KeyExchangeParameters) -> SymmetricKey {
        do {
            var recipient = try RecipientSession(privateKey: identity, parameters: parameters)
            return try recipient.featureKeys(featureID: SimulatorIdentity.featureID).hostToAccessory
        } catch {
            preconditionFailure("an exchange the session accepted does not derive keys: \(error)")
        }
    }

    /// Everything the accessory sends fits its chunk length and reassembles into one message
    /// that decodes; error details stay within their limit.
    private mutating func checkOutbound(_ chunks: [[UInt8]], kind: String) {
        precondition(!chunks.isEmpty, "\(kind) framed into no chunks")
        for (index, chunk) in chunks.enumerated() {
            precondition(chunk.count <= connection.chunkLength, "\(kind): a \(chunk.count)-byte chunk over \(connection.chunkLength)")
            let message: [UInt8]?
            do {
                message = try hostSide.receive(chunk, now: now)
            } catch {
                preconditionFailure("\(kind): the host refuses the accessory's chunk: \(error)")
            }
            precondition((message != nil) == (index == chunks.count - 1), "\(kind) did not complete at its last chunk")
            guard let message else { continue }
            guard let decoded = try? WireCodec.decode(LinkMessage.self, from: message) else {
                preconditionFailure("\(kind): the accessory sent a message that does not decode")
            }
            precondition(decoded.kindName == kind, "sent \(decoded.kindName) as \(kind)")
            if case .error(let error) = decoded.body {
                precondition(error.detail.utf8.count <= maxLinkErrorDetailLength, "LinkError detail of \(error.detail.utf8.count) bytes")
            }
        }
    }
}
