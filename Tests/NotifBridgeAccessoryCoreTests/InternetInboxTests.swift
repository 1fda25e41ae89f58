import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// Messages from the relay into the accessory: what is delivered, discarded or refused, the
/// length limit's boundary pair, and the in-memory ratchet following the store's commits.
@Suite("Internet inbox")
struct InternetInboxTests {
    static let chainKey = Data(repeating: 0x5a, count: 32)
    static let keyID: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
    static let start = Date(timeIntervalSince1970: 1_778_490_000)

    private func inbox(window: Int = InternetRatchet.maxSkippedKeys, maxPlaintext: Int = 64 * 1024) throws -> InternetInbox {
        InternetInbox(ratchet: try ReceivingRatchet(chainKey: Self.chainKey, maxSkippedKeys: window), keyID: Self.keyID, exchangeID: 7, maxPlaintextLength: maxPlaintext)
    }

    private static func event(_ sequence: UInt64) throws -> Data {
        var event = HostEvent()
        event.sequence = sequence
        event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "n\(sequence)", sourceName: "S", body: "b"), .standard), now: start)
        return Data(try WireCodec.encode(event))
    }

    /// Sealed messages, index i carrying `plaintexts[i]`.
    private static func messages(_ plaintexts: [Data]) throws -> [Data] {
        var sender = try SendingRatchet(chainKey: chainKey)
        return try plaintexts.map { try sender.seal($0, keyID: keyID).serialized }
    }

    /// One word for an outcome, for the table.
    private static func word(_ outcome: InternetInbox.Outcome) -> String {
        switch outcome {
        case .deliver(let event, _, let index): "deliver \(index) seq \(event.sequence)"
        case .discard(_, _, let index): "discard \(index)"
        case .refuse(let refusal): "refuse \(refusal.code.rawValue)"
        }
    }

    @Test("Deliveries in a table: order, reordering, replay, tampering, another key, an invalid event", arguments: [
        (name: "in order", deliveries: [0, 1, 2], expected: ["deliver 0 seq 1", "deliver 1 seq 2", "deliver 2 seq 3"]),
        ("late within the window", [2, 0, 1], ["deliver 2 seq 3", "deliver 0 seq 1", "deliver 1 seq 2"]),
        ("replayed", [0, 0, 2, 2], ["deliver 0 seq 1", "refuse replayed", "deliver 2 seq 3", "refuse replayed"]),
        ("tampered, then the real one", [-1, 1], ["refuse decryptFailed", "deliver 1 seq 2"]),
        ("another exchange's key ID", [-2, 0], ["refuse unknownKeyID", "deliver 0 seq 1"]),
        ("authentic but not an event, then replayed", [3, 3, 0], ["discard 3", "refuse replayed", "deliver 0 seq 1"]),
        ("too short to be a message", [-3], ["refuse malformed"]),
    ])
    func table(name: String, deliveries: [Int], expected: [String]) throws {
        var plaintexts = try (1...3).map { try Self.event(UInt64($0)) }
        plaintexts.append(Data([0xff, 0xff, 0xff]))
        let messages = try Self.messages(plaintexts)
        var inbox = try inbox()
        let outcomes = deliveries.map { delivery -> String in
            switch delivery {
            case -1:
                var tampered = messages[1]
                tampered[tampered.count - 1] ^= 1
                return Self.word(inbox.receive(tampered))
            case -2:
                var foreign = messages[0]
                foreign[0] ^= 1
                return Self.word(inbox.receive(foreign))
            case -3:
                return Self.word(inbox.receive(Data(repeating: 0, count: InternetRatchet.minimumMessageLength - 1)))
            default:
                return Self.word(inbox.receive(messages[delivery]))
            }
        }
        #expect(outcomes == expected, "\(name)")
    }

    @Test("The length limit: a message of exactly the limit is read, one byte more is refused unread")
    func lengthBoundary() throws {
        var inbox = try inbox(maxPlaintext: 100)
        #expect(inbox.maxMessageLength == 100 + InternetRatchet.minimumMessageLength)
        let atLimit = try Self.messages([Data(repeating: 1, count: 100)])[0]
        #expect(atLimit.count == inbox.maxMessageLength)
        #expect(Self.word(inbox.receive(atLimit)) == "discard 0")
        var over = try Self.messages([Data(repeating: 1, count: 101)])[0]
        #expect(Self.word(inbox.receive(over)) == "refuse tooLarge")
        over.removeLast()
        #expect(Self.word(inbox.receive(over)) != "refuse tooLarge")
    }

    @Test("A gap past the window is refused and moves nothing; the window's edge opens")
    func gapPastTheWindow() throws {
        let plaintexts = try (1...6).map { try Self.event(UInt64($0)) }
        let messages = try Self.messages(plaintexts)
        var inbox = try inbox(window: 4)
        #expect(Self.word(inbox.receive(messages[5])) == "refuse tooFarAhead")
        #expect(inbox.ratchet.nextIndex == 0)
        #expect(Self.word(inbox.receive(messages[4])) == "deliver 4 seq 5")
        #expect(inbox.ratchet.skippedCount == 4)
    }

    @Test("A failed commit takes the ratchet back so the redelivered messages open again; a commit keeps it")
    func followsTheStore() throws {
        let messages = try Self.messages(try (1...4).map { try Self.event(UInt64($0)) })
        var inbox = try inbox()
        _ = inbox.receive(messages[0])
        inbox.committed()
        let committed = inbox.ratchet.snapshot
        #expect(Self.word(inbox.receive(messages[2])) == "deliver 2 seq 3")
        #expect(Self.word(inbox.receive(messages[1])) == "deliver 1 seq 2")
        inbox.rolledBack()
        #expect(inbox.ratchet.snapshot == committed)
        #expect(Self.word(inbox.receive(messages[2])) == "deliver 2 seq 3")
        inbox.committed()
        inbox.rolledBack()
        #expect(Self.word(inbox.receive(messages[2])) == "refuse replayed")
        #expect(Self.word(inbox.receive(messages[1])) == "deliver 1 seq 2")
    }
}
