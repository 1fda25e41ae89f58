import Crypto
import Foundation
import NotifBridgeCrypto
import NotifBridgeTestSupport
import NotifBridgeVectors
import NotifBridgeWire
import Testing

/// Tests/Vectors/ratchet-v1.json, checked the way docs/PROTOCOL.md §10.4 tells a firmware writer
/// to: from the accessory's secret to the exported chain keys, each step, each message byte for
/// byte, and a receiver's answer to each delivery.
@Suite("Ratchet vectors")
struct RatchetVectorTests {
    static let file = try? RatchetVectors.load(from: TestVectors.directory.appendingPathComponent("ratchet-v1.json"))

    @Test("The exchange exports the recorded chain keys; the key ID is SHA-384's first 4 bytes")
    func export() throws {
        let file = try #require(Self.file)
        let suite = try #require(CipherSuite(wireName: file.suite))
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(hex: file.accessorySecret))
        #expect(key.publicKeyRepresentation.hex == file.accessoryPublicKey)
        #expect(Data(InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)).hex == file.internetKeyID)
        #expect(Data(SHA384.hash(data: key.publicKeyRepresentation).prefix(4)).hex == file.internetKeyID)

        let parameters = KeyExchangeParameters(cipherSuite: file.suite, version: file.version, identifier: file.identifier, encapsulatedKey: Data(hex: file.encapsulatedKey))
        let recipient = try RecipientSession(privateKey: key, parameters: parameters)
        let chainKeys = try recipient.internetChainKeys(bluetoothUUID: file.bluetoothUUID)
        #expect(file.chains.map(\.direction) == [Direction.hostToAccessory.rawValue, Direction.accessoryToHost.rawValue])
        for chain in file.chains {
            let direction = try #require(Direction(rawValue: chain.direction))
            #expect(chain.exportContext == "AccessoryInternetKey-\(chain.direction)-\(file.bluetoothUUID)")
            #expect(chainKeys.chainKey(for: direction).hex == chain.chainKey)
        }
    }

    @Test("Each step's info, message key and next chain key", arguments: [0, 1])
    func steps(chainNumber: Int) throws {
        let chain = try #require(Self.file?.chains[chainNumber])
        var chainKey = Data(hex: chain.chainKey)
        #expect(chain.steps.map(\.index) == [0, 1, 2, 3])
        for step in chain.steps {
            var info = Data("AccessoryTransportSecurity-RatchetKeys-".utf8)
            info.append(contentsOf: [UInt8(step.index), 0, 0, 0])
            #expect(info.hex == step.info)
            let (messageKey, next) = InternetRatchet.step(chainKey: SymmetricKey(data: chainKey), index: step.index)
            #expect(messageKey.withUnsafeBytes { Data($0) }.hex == step.messageKey)
            // The same 64 bytes from HKDF-Expand directly: message key first, then the next chain key.
            let expanded = HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: chainKey), info: info, outputByteCount: 64).withUnsafeBytes { Data($0) }
            #expect(expanded.hex == step.messageKey + step.nextChainKey)
            chainKey = next.withUnsafeBytes { Data($0) }
            #expect(chainKey.hex == step.nextChainKey)
        }
    }

    @Test("Sealing each plaintext under its recorded nonce gives the recorded message", arguments: [0, 1])
    func messages(chainNumber: Int) throws {
        let file = try #require(Self.file)
        let chain = file.chains[chainNumber]
        var chainKey = Data(hex: chain.chainKey)
        var index: UInt32 = 0
        #expect(chain.messages.map(\.index) == chain.messages.map(\.index).sorted())
        for message in chain.messages {
            while index < message.index {
                chainKey = InternetRatchet.step(chainKey: chainKey, index: index).nextChainKey
                index += 1
            }
            var sender = try SendingRatchet(chainKey: chainKey, nextIndex: index)
            let nonce = Array(Data(hex: message.nonce))
            let sealed = try sender.seal(Data(hex: message.plaintext), keyID: Array(Data(hex: file.internetKeyID)), nonces: NonceSource { nonce })
            #expect(sealed.serialized.hex == message.message)
            chainKey = sender.chainKeyBytes
            index = sender.nextIndex
        }
        if chainNumber == 0 {
            let event = try WireCodec.decode(HostEvent.self, from: Array(Data(hex: chain.messages[3].plaintext)))
            #expect(event.sequence == 4)
        }
    }

    @Test("A receiver gives the recorded outcome for every delivery", arguments: [0, 1])
    func deliveries(chainNumber: Int) throws {
        let file = try #require(Self.file)
        let chain = file.chains[chainNumber]
        let keyID = Array(Data(hex: file.internetKeyID))
        var receiver = try ReceivingRatchet(chainKey: Data(hex: chain.chainKey))
        #expect(chain.deliveries.contains { $0.outcome == "replayed" })
        for delivery in chain.deliveries {
            let recorded = chain.messages.first { $0.index == delivery.index }
            let bytes = try #require(delivery.message ?? recorded?.message, "delivery of \(delivery.index) has no bytes")
            do {
                let message = try RatchetMessage(parsing: Data(hex: bytes))
                #expect(message.messageIndex == delivery.index)
                let plaintext = try receiver.open(message, keyID: keyID)
                #expect(delivery.outcome == "opened", "message \(delivery.index) opened; \(delivery.note ?? "")")
                #expect(plaintext.hex == recorded?.plaintext)
            } catch {
                #expect(delivery.outcome == error.code.rawValue, "message \(delivery.index): \(error); \(delivery.note ?? "")")
            }
        }
    }

    @Test("The host's deliveries give every outcome of §10.4 and reach the window's edge")
    func everyOutcome() throws {
        let chain = try #require(Self.file?.chains.first)
        let outcomes = Set(chain.deliveries.map(\.outcome))
        let refusals = Set([RatchetError.Code.malformed, .unknownKeyID, .replayed, .tooFarAhead, .decryptFailed].map(\.rawValue))
        #expect(outcomes == refusals.union(["opened"]))
        let window = UInt32(InternetRatchet.maxSkippedKeys)
        // The edge (50,000 ahead) opens and one past it is refused, from the same next index, 6.
        #expect(chain.deliveries.contains { $0.index == 6 + window && $0.outcome == "opened" })
        #expect(chain.deliveries.contains { $0.index == 6 + window + 1 && $0.outcome == "tooFarAhead" })
    }

    @Test("Regenerating from the recorded exchange writes the file as it is")
    func regenerates() throws {
        let url = TestVectors.directory.appendingPathComponent("ratchet-v1.json")
        let file = try RatchetVectors.load(from: url)
        #expect(try RatchetVectors.make(recorded: file) == Data(contentsOf: url))
    }

    @Test("docs/PROTOCOL.md §10.5 quotes the vector file as it is")
    func workedExampleInStep() throws {
        let chain = try #require(Self.file?.chains.first)
        let protocolText = try String(
            contentsOf: TestVectors.directory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md"),
            encoding: .utf8
        )
        let example = try #require(protocolText.range(of: "### 10.5 Worked example").map { String(protocolText[$0.upperBound...]) })
        let step = chain.steps[0]
        let message = chain.messages[0]
        for line in [
            "chain_key[0]   = \(chain.chainKey)", "info           = \(step.info)", "message_key[0] = \(step.messageKey)",
            "chain_key[1]   = \(step.nextChainKey)", "nonce          = \(message.nonce)",
            "message        = \(message.message.prefix(8)) \(message.message.dropFirst(8).prefix(8)) \(message.message.dropFirst(16).prefix(24)) \(message.message.dropFirst(40).prefix(32))…",
        ] {
            #expect(example.contains(line), "§10.5 lacks: \(line)")
        }
    }
}
