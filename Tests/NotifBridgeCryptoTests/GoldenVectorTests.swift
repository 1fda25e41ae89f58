import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeTestSupport
import NotifBridgeVectors
import NotifBridgeWire
import Testing

/// Our own recorded exchanges: fixed accessory keys, the encapsulated keys iOS-side code made,
/// and ciphertexts with their expected plaintexts (written by `notifbridge vectors`).
@Suite("Golden protocol vectors")
struct GoldenVectorTests {
    static let file = try? GoldenVectors.load(from: TestVectors.directory.appendingPathComponent("golden-v1.json"))
    static let exchanges = file?.exchanges ?? []

    private func restore(_ exchange: GoldenVectors.Exchange) throws -> (AccessoryPrivateKey, KeyExchangeParameters) {
        let suite = try #require(CipherSuite(wireName: exchange.suite))
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(hex: exchange.accessorySecret))
        let parameters = KeyExchangeParameters(cipherSuite: exchange.suite, version: exchange.version, identifier: exchange.identifier, encapsulatedKey: Data(hex: exchange.encapsulatedKey))
        return (key, parameters)
    }

    @Test("Both suites are covered")
    func coverage() {
        #expect(Set(Self.exchanges.map(\.suite)) == ["XWing", "P256"])
    }

    @Test("Keys, exports and every message decrypt to the recorded plaintext", arguments: exchanges.map(\.suite))
    func decrypt(suite: String) throws {
        let exchange = try #require(Self.exchanges.first { $0.suite == suite })
        let (key, parameters) = try restore(exchange)
        #expect(key.publicKeyRepresentation.hex == exchange.accessoryPublicKey)
        #expect(Data(key.keyID).hex == exchange.keyID)
        #expect(exchangeHex(parameters.exchangeID) == exchange.exchangeID)

        var recipient = try RecipientSession(privateKey: key, parameters: parameters)
        let keys = try recipient.featureKeys(featureID: exchange.featureID)
        #expect(keys.rawBytes(for: .hostToAccessory).hex == exchange.hostToAccessoryKey)
        #expect(keys.rawBytes(for: .accessoryToHost).hex == exchange.accessoryToHostKey)

        for message in exchange.messages {
            let direction = try #require(Direction(rawValue: message.direction))
            let plaintext = try FeatureCipher.open(Data(hex: message.ciphertext), using: keys.key(for: direction))
            #expect(plaintext.hex == message.plaintext, "\(message.summary)")
        }
        for message in exchange.messages {
            let plaintext = Data(hex: message.plaintext)
            let decoded = message.direction == Direction.hostToAccessory.rawValue
                ? try DecodedJSON(WireCodec.decode(HostEvent.self, from: plaintext))
                : try DecodedJSON(WireCodec.decode(AccessoryEvent.self, from: plaintext))
            #expect(decoded == message.decoded, "\(message.summary): the file's decoded form is its plaintext's")
        }
        let first = try WireCodec.decode(HostEvent.self, from: Data(hex: exchange.messages[0].plaintext))
        #expect(first.sequence == 1)
        #expect(first.add.notification.title == "Anna Schmidt")
        #expect(first.add.notification.body.plainText == "Are we still on for lunch? 🍜")
    }

    @Test("The accessory state machine delivers the recorded messages", arguments: exchanges.map(\.suite))
    func throughStateMachine(suite: String) throws {
        let exchange = try #require(Self.exchanges.first { $0.suite == suite })
        let (key, parameters) = try restore(exchange)
        var session = AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth]))
        var hello = LinkMessage()
        hello.hello = .with { $0.protocolVersion = 1 }
        #expect(session.received(hello).count == 1)

        var material = LinkMessage()
        material.keyMaterial = .with {
            $0.cipherSuite = parameters.cipherSuite
            $0.version = parameters.version
            $0.identifier = parameters.identifier
            $0.encapsulatedKey = parameters.encapsulatedKey
            $0.keyID = Data(key.keyID)
        }
        _ = session.received(material)
        #expect(session.exchangeID == parameters.exchangeID)

        var bind = LinkMessage()
        bind.bindFeature = .with {
            $0.featureRef = 1
            $0.featureID = exchange.featureID
        }
        #expect(session.received(bind).isEmpty)

        var sequences: [UInt64] = []
        for message in exchange.messages where message.direction == Direction.hostToAccessory.rawValue {
            var sealed = LinkMessage()
            sealed.sealed = .with {
                $0.featureRef = 1
                $0.ciphertext = Data(hex: message.ciphertext)
            }
            let actions = session.received(sealed)
            guard actions.count == 1, case .deliver(let delivery) = actions[0] else {
                Issue.record("\(message.summary) was not delivered: \(actions)")
                continue
            }
            #expect(WireCodec.encode(delivery.event) == [UInt8](Data(hex: message.plaintext)))
            #expect(delivery.featureID == exchange.featureID)
            sequences.append(delivery.event.sequence)
        }
        #expect(sequences == Array(1...UInt64(sequences.count)))
    }

    /// Regenerating the file changes the exchange ID, and the document quotes it with its bytes.
    @Test("docs/PROTOCOL.md §4.2 quotes the X-Wing vector's exchange ID and its KeyConfirm bytes")
    func exchangeIDExample() throws {
        let exchange = try #require(Self.exchanges.first { $0.suite == "XWing" })
        var message = LinkMessage()
        message.keyConfirm = .with { $0.exchangeID = UInt64(exchange.exchangeID, radix: 16) ?? 0 }
        let bytes = WireCodec.encode(message).map { String(format: "%02x", $0) }.joined(separator: " ")
        let document = try String(
            contentsOf: TestVectors.directory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md"),
            encoding: .utf8
        )
        let text = document.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("the X-Wing vector's `\(exchange.exchangeID)` is the LinkMessage `\(bytes)`"), "§4.2 should quote \(exchange.exchangeID) as \(bytes)")
    }

    /// The file is what the code writes today: a change to what the messages say (an encoding,
    /// a sample) shows here, so the vectors and PROTOCOL.md are regenerated and read again.
    @Test("Regenerating from the recorded exchanges writes the file as it is")
    func regenerates() throws {
        let url = TestVectors.directory.appendingPathComponent("golden-v1.json")
        #expect(try GoldenVectors.make(recorded: GoldenVectors.load(from: url)) == Data(contentsOf: url))
    }
}
