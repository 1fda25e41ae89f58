import Foundation
import NotifBridgeCrypto
import NotifBridgeTestSupport
import Testing

/// What `openRecordingChanges` reports is all a store writes after a message, so applying the
/// changes to the state saved before must give exactly the state after, through reordering,
/// replays, forgeries and evictions.
@Suite("Ratchet changes")
struct RatchetChangesTests {
    static let chainKey = Data((0..<32).map { UInt8(0x90 &+ $0) })
    static let keyID: [UInt8] = [1, 2, 3, 4]

    /// Applies one message's changes to a saved state, as AccessoryStore does with rows.
    private func apply(_ changes: ReceivingRatchet.Changes, to saved: ReceivingRatchet.Snapshot) -> ReceivingRatchet.Snapshot {
        #expect(changes.previousNextIndex == saved.nextIndex, "changes made from another state")
        var keys = Dictionary(uniqueKeysWithValues: saved.skipped.map { ($0.index, $0.key) })
        if let spent = changes.spent { #expect(keys.removeValue(forKey: spent) != nil, "spent key \(spent) was not saved") }
        for index in changes.evicted { #expect(keys.removeValue(forKey: index) != nil, "evicted key \(index) was not saved") }
        for kept in changes.kept {
            #expect(keys[kept.index] == nil, "index \(kept.index) kept twice")
            keys[kept.index] = kept.key
        }
        let skipped = keys.sorted { $0.key < $1.key }.map { ReceivingRatchet.Snapshot.SkippedKey(index: $0.key, key: $0.value) }
        return ReceivingRatchet.Snapshot(chainKey: changes.chainKey, nextIndex: changes.nextIndex, skipped: skipped)
    }

    @Test("Changes applied to the saved state give the new state", arguments: [0, 8, 64, InternetRatchet.maxSkippedKeys])
    func changesReplayTheState(window: Int) throws {
        var random = SeededGenerator(seed: UInt64(window) + 1)
        var sender = try SendingRatchet(chainKey: Self.chainKey)
        let messages = try (0..<300).map { _ in try sender.seal(Data("m\(sender.nextIndex)".utf8), keyID: Self.keyID) }
        var receiver = try ReceivingRatchet(chainKey: Self.chainKey, maxSkippedKeys: window)
        var saved = receiver.snapshot
        var opened = 0
        for _ in 0..<600 {
            // Mostly near the next expected index, so that every window size sees openings, late
            // arrivals, replays and jumps past its edge.
            let reach = min(window, 40) + 3
            let pick = Int(receiver.nextIndex) + Int.random(in: -reach...reach, using: &random)
            var message = messages[min(max(pick, 0), messages.count - 1)]
            if Int.random(in: 0..<10, using: &random) == 0 { message.sealed[message.sealed.count - 1] ^= 1 }
            guard let (_, changes) = try? receiver.openRecordingChanges(message, keyID: Self.keyID) else {
                #expect(receiver.snapshot == saved, "a refusal changed the state")
                continue
            }
            opened += 1
            saved = apply(changes, to: saved)
            #expect(saved == receiver.snapshot)
            #expect(saved.skipped.count <= window)
        }
        #expect(opened > 20)
    }

    /// The window's boundary pair: a jump that fills it exactly keeps every skipped key; one
    /// more drops the oldest, and the kept and evicted lists never name the same index.
    @Test("A jump to the window's edge keeps all; one past it evicts the oldest")
    func evictionAtTheEdge() throws {
        var sender = try SendingRatchet(chainKey: Self.chainKey)
        let messages = try (0..<12).map { _ in try sender.seal(Data([0]), keyID: Self.keyID) }
        var receiver = try ReceivingRatchet(chainKey: Self.chainKey, maxSkippedKeys: 4)
        let atEdge = try receiver.openRecordingChanges(messages[4], keyID: Self.keyID).changes
        #expect(atEdge.kept.map(\.index) == [0, 1, 2, 3])
        #expect(atEdge.evicted.isEmpty)
        let pastEdge = try receiver.openRecordingChanges(messages[6], keyID: Self.keyID).changes
        #expect(pastEdge.kept.map(\.index) == [5])
        #expect(pastEdge.evicted == [0])
        let replaced = try receiver.openRecordingChanges(messages[11], keyID: Self.keyID).changes
        #expect(replaced.kept.map(\.index) == [7, 8, 9, 10])
        #expect(replaced.evicted == [1, 2, 3, 5])
        #expect(Set(replaced.kept.map(\.index)).isDisjoint(with: replaced.evicted))
    }
}
