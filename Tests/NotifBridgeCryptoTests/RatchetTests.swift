import Foundation
@testable import NotifBridgeCrypto
import NotifBridgeTestSupport
import Testing

/// The internet transport's ratchet: reordering within the window, replays, the window's bound,
/// refusals that change nothing, and a receiver's saved state.
@Suite("Internet ratchet")
struct RatchetTests {
    static let chainKey = Data((0..<32).map { UInt8(0x40 + $0) })
    static let keyID: [UInt8] = [0xa1, 0xb2, 0xc3, 0xd4]

    /// `count` messages from a fresh sender, indices 0..<count, each carrying its index as text.
    private func messages(_ count: Int, from start: UInt32 = 0) throws -> [RatchetMessage] {
        var sender = try SendingRatchet(chainKey: Self.chainKey, nextIndex: start)
        return try (0..<count).map { _ in try sender.seal(Data("message \(sender.nextIndex)".utf8), keyID: Self.keyID) }
    }

    /// One message at `index`, sealed by a sender that skipped straight to it.
    private func message(at index: UInt32) throws -> RatchetMessage {
        var chain = Self.chainKey
        for step in 0..<index { chain = InternetRatchet.step(chainKey: chain, index: step).nextChainKey }
        var sender = try SendingRatchet(chainKey: chain, nextIndex: index)
        return try sender.seal(Data("message \(index)".utf8), keyID: Self.keyID)
    }

    private func receiver() throws -> ReceivingRatchet {
        try ReceivingRatchet(chainKey: Self.chainKey)
    }

    private func refusal(_ receiver: inout ReceivingRatchet, _ message: RatchetMessage, keyID: [UInt8] = keyID) -> RatchetError.Code? {
        do {
            _ = try receiver.open(message, keyID: keyID)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("In order, every message opens once; a second delivery is a replay")
    func inOrderAndReplay() throws {
        var receiver = try receiver()
        for message in try messages(5) {
            #expect(try receiver.open(message, keyID: Self.keyID) == Data("message \(message.messageIndex)".utf8))
            #expect(refusal(&receiver, message) == .replayed)
        }
        #expect(receiver.nextIndex == 5)
        #expect(receiver.skippedCount == 0)
    }

    @Test("Reordered within the window (seeded shuffles): all open exactly once", arguments: [UInt64(1), 2, 3])
    func seededReordering(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let sent = try messages(300)
        var receiver = try receiver()
        for message in sent.shuffled(using: &generator) {
            #expect(try receiver.open(message, keyID: Self.keyID) == Data("message \(message.messageIndex)".utf8))
        }
        #expect(receiver.skippedCount == 0)
        for message in sent.shuffled(using: &generator).prefix(20) {
            #expect(refusal(&receiver, message) == .replayed)
        }
    }

    @Test("A message exactly maxSkippedKeys ahead opens; one further is refused and changes nothing")
    func windowBoundary() throws {
        let limit = UInt32(InternetRatchet.maxSkippedKeys)
        var receiver = try receiver()
        #expect(refusal(&receiver, try message(at: limit + 1)) == .tooFarAhead)
        #expect(receiver.nextIndex == 0)
        #expect(receiver.skippedCount == 0)

        #expect(try receiver.open(try message(at: limit), keyID: Self.keyID) == Data("message \(limit)".utf8))
        #expect(receiver.nextIndex == limit + 1)
        #expect(receiver.skippedCount == InternetRatchet.maxSkippedKeys)
        // The oldest kept key still opens its late message.
        #expect(try receiver.open(try message(at: 0), keyID: Self.keyID) == Data("message 0".utf8))
    }

    @Test("When the window is full, the oldest skipped keys go first")
    func eviction() throws {
        let limit = UInt32(InternetRatchet.maxSkippedKeys)
        var receiver = try receiver()
        _ = try receiver.open(try message(at: limit), keyID: Self.keyID)
        // Skipping two more (limit + 1, limit + 2) pushes out indices 0 and 1.
        _ = try receiver.open(try message(at: limit + 3), keyID: Self.keyID)
        #expect(receiver.skippedCount == InternetRatchet.maxSkippedKeys)
        #expect(!receiver.isSkipped(0) && !receiver.isSkipped(1) && receiver.isSkipped(2))
        #expect(refusal(&receiver, try message(at: 1)) == .replayed)
        #expect(try receiver.open(try message(at: 2), keyID: Self.keyID) == Data("message 2".utf8))
        #expect(try receiver.open(try message(at: limit + 1), keyID: Self.keyID) == Data("message \(limit + 1)".utf8))
    }

    @Test("A forged message ahead moves nothing; a forged late one leaves its key for the real one")
    func forgeriesChangeNothing() throws {
        let sent = try messages(4)
        var receiver = try receiver()
        _ = try receiver.open(sent[0], keyID: Self.keyID)

        var forgedAhead = sent[3]
        forgedAhead.sealed[forgedAhead.sealed.count - 1] ^= 1
        #expect(refusal(&receiver, forgedAhead) == .decryptFailed)
        #expect(receiver.nextIndex == 1 && receiver.skippedCount == 0)

        _ = try receiver.open(sent[2], keyID: Self.keyID)
        var forgedLate = sent[1]
        forgedLate.sealed[0] ^= 1
        #expect(refusal(&receiver, forgedLate) == .decryptFailed)
        #expect(receiver.isSkipped(1))
        #expect(try receiver.open(sent[1], keyID: Self.keyID) == Data("message 1".utf8))
    }

    @Test("After one walk, a forgery far ahead costs at most a checkpoint interval of steps")
    func forgeriesFarAheadAreCheap() throws {
        let limit = UInt32(InternetRatchet.maxSkippedKeys)
        var receiver = try receiver()
        var forged = try message(at: limit)
        forged.sealed[20] ^= 1
        #expect(refusal(&receiver, forged) == .decryptFailed)
        #expect(receiver.stepsDerived == Int(limit) + 1)
        for index: UInt32 in [limit, limit - 1, 1025, 3 * 1024 + 5] {
            forged.messageIndex = index
            let before = receiver.stepsDerived
            #expect(refusal(&receiver, forged) == .decryptFailed)
            #expect(receiver.stepsDerived - before <= Int(ReceivingRatchet.checkpointInterval))
        }
        #expect(receiver.nextIndex == 0 && receiver.skippedCount == 0)
        // The real message still opens, and keeps every key below it.
        #expect(try receiver.open(try message(at: limit), keyID: Self.keyID) == Data("message \(limit)".utf8))
        #expect(receiver.skippedCount == InternetRatchet.maxSkippedKeys)
        #expect(try receiver.open(try message(at: 7), keyID: Self.keyID) == Data("message 7".utf8))
    }

    @Test("Another exchange's key ID is refused before any work")
    func unknownKeyID() throws {
        var receiver = try receiver()
        #expect(refusal(&receiver, try messages(1)[0], keyID: [0, 0, 0, 0]) == .unknownKeyID)
        #expect(receiver.nextIndex == 0)
    }

    @Test("Lengths: a message needs header, nonce and tag; a chain key is 32 bytes", arguments: [
        (InternetRatchet.minimumMessageLength - 1, false), (InternetRatchet.minimumMessageLength, true),
    ])
    func messageLength(length: Int, parses: Bool) throws {
        let parsed = try? RatchetMessage(parsing: [UInt8](repeating: 7, count: length))
        #expect((parsed != nil) == parses)
        #expect(parsed?.messageIndex == (parses ? 0x0707_0707 : nil))
    }

    @Test("Chain keys of 31 and 33 bytes are refused, 32 accepted", arguments: [(31, false), (32, true), (33, false)])
    func chainKeyLength(length: Int, accepted: Bool) {
        let bytes = Data(repeating: 1, count: length)
        #expect(((try? SendingRatchet(chainKey: bytes)) != nil) == accepted)
        #expect(((try? ReceivingRatchet(chainKey: bytes)) != nil) == accepted)
    }

    @Test("Serialising: keyID, little-endian index, sealed box")
    func serialisation() throws {
        let message = RatchetMessage(keyID: Self.keyID, messageIndex: 0x0102_0304, sealed: Data(repeating: 9, count: 28))
        #expect(Array(message.serialized.prefix(8)) == Self.keyID + [0x04, 0x03, 0x02, 0x01])
        #expect(try RatchetMessage(parsing: message.serialized) == message)
    }

    @Test("The chain's last index is never used: the sender stops, the receiver refuses it")
    func endOfChain() throws {
        var sender = try SendingRatchet(chainKey: Self.chainKey, nextIndex: .max - 1)
        let last = try sender.seal(Data("last".utf8), keyID: Self.keyID)
        #expect(last.messageIndex == UInt32.max - 1)
        #expect(throws: RatchetError.self) { try sender.seal(Data(), keyID: Self.keyID) }

        var receiver = try ReceivingRatchet(chainKey: Self.chainKey, nextIndex: .max - 1)
        #expect(try receiver.open(last, keyID: Self.keyID) == Data("last".utf8))
        var beyond = last
        beyond.messageIndex = .max
        #expect(refusal(&receiver, beyond) == .tooFarAhead)
    }

    @Test("A saved receiver restores and goes on: late keys still open, spent ones stay spent")
    func snapshotRoundTrip() throws {
        let sent = try messages(6)
        var receiver = try receiver()
        for index in [0, 3, 5] { _ = try receiver.open(sent[index], keyID: Self.keyID) }
        let saved = try JSONDecoder().decode(ReceivingRatchet.Snapshot.self, from: JSONEncoder().encode(receiver.snapshot))
        #expect(saved.skipped.map(\.index) == [1, 2, 4])

        var restored = try ReceivingRatchet(snapshot: saved)
        #expect(restored.nextIndex == 6)
        #expect(refusal(&restored, sent[3]) == .replayed)
        for index in [4, 1, 2] {
            #expect(try restored.open(sent[index], keyID: Self.keyID) == Data("message \(index)".utf8))
        }
        #expect(try restored.open(try message(at: 6), keyID: Self.keyID) == Data("message 6".utf8))
    }

    @Test("A saved state no receiver could write is refused", arguments: [
        "skipped index at nextIndex", "indices out of order", "short key",
    ])
    func badSnapshot(problem: String) throws {
        var snapshot = ReceivingRatchet.Snapshot(chainKey: Self.chainKey, nextIndex: 5, skipped: [
            .init(index: 1, key: Data(repeating: 1, count: 32)), .init(index: 3, key: Data(repeating: 3, count: 32)),
        ])
        #expect((try? ReceivingRatchet(snapshot: snapshot)) != nil)
        switch problem {
        case "skipped index at nextIndex": snapshot.skipped[1].index = 5
        case "indices out of order": snapshot.skipped.swapAt(0, 1)
        default: snapshot.skipped[0].key = Data(repeating: 1, count: 31)
        }
        #expect(throws: RatchetError.self) { try ReceivingRatchet(snapshot: snapshot) }
    }

    @Test("Skip one, deliver it late, 5,000 times: the bookkeeping stays bounded")
    func bookkeepingBounded() throws {
        let sent = try messages(10_000)
        var receiver = try receiver()
        for pair in stride(from: 0, to: sent.count, by: 2) {
            _ = try receiver.open(sent[pair + 1], keyID: Self.keyID)
            _ = try receiver.open(sent[pair], keyID: Self.keyID)
        }
        #expect(receiver.skippedCount == 0)
        #expect(receiver.trackedIndexCount <= 2 * 1024 + 1)
    }
}

