import Foundation
import NotifBridgeCrypto

/// The internet ratchet's receiver fed what a network can deliver: real messages early, late,
/// twice or tampered with, and bytes of any shape, with saves and restores in between. A model
/// of the rules (docs/PROTOCOL.md §10.4) in plain Swift says what must open; a small window lets
/// short inputs reach eviction.
///
/// Every opening's `Changes` are applied to a saved copy the way a store writes them; a save and
/// restore starts again from that copy, which must equal the receiver's own state.
///
/// Input: records; the tag's low two bits pick delivering message `body[0]`, delivering it with
/// one bit flipped (`body[1]`, `body[2]`), parsing and delivering the body as it is, or a save
/// and restore.
enum RatchetTarget {
    static let window = 16
    static let keyID: [UInt8] = [0x6e, 0x62, 0x66, 0x7a]
    static let chainKey = Data(repeating: 0x42, count: InternetRatchet.chainKeyLength)
    /// Messages 0…127, sealed once: sealing per input would take most of the time.
    static let messages: [RatchetMessage] = {
        do {
            var sender = try SendingRatchet(chainKey: chainKey)
            return try (0..<128).map { index in try sender.seal(plaintext(UInt32(index)), keyID: keyID) }
        } catch {
            preconditionFailure("sealing the pool: \(error)")
        }
    }()

    static func plaintext(_ index: UInt32) -> Data {
        Data("message \(index)".utf8)
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var receiver: ReceivingRatchet
        do {
            receiver = try ReceivingRatchet(chainKey: chainKey, maxSkippedKeys: window)
        } catch {
            preconditionFailure("a fresh receiver: \(error)")
        }
        var model = Model(window: window)
        var persisted = receiver.snapshot
        while let (tag, body) = input.record() {
            switch tag & 3 {
            case 0:
                let message = messages[Int(body.first ?? 0) % messages.count]
                let expected = model.deliver(message.messageIndex)
                let outcome = Result { () throws(RatchetError) in try receiver.openRecordingChanges(message, keyID: keyID) }
                switch (outcome, expected) {
                case (.success(let opened), nil):
                    precondition(opened.plaintext == plaintext(message.messageIndex), "message \(message.messageIndex) opened to other bytes")
                    persisted = applying(opened.changes, to: persisted)
                case (.failure(let error), let code?):
                    precondition(error.code == code, "message \(message.messageIndex): \(error.code), the rules say \(code)")
                case (.success, let code?):
                    preconditionFailure("message \(message.messageIndex) opened; the rules say \(code)")
                case (.failure(let error), nil):
                    preconditionFailure("message \(message.messageIndex) refused (\(error)); the rules say it opens")
                }
            case 1:
                var message = messages[Int(body.first ?? 0) % messages.count]
                let bit = Int(body.count > 2 ? body[2] : 0) % (8 * message.sealed.count)
                message.sealed[bit / 8] ^= 1 << (bit % 8)
                let before = (receiver.nextIndex, receiver.skippedCount)
                precondition((try? receiver.open(message, keyID: keyID)) == nil, "a tampered message \(message.messageIndex) opened")
                precondition(before == (receiver.nextIndex, receiver.skippedCount), "a refused message changed the ratchet")
            case 2:
                guard let message = try? RatchetMessage(parsing: body) else { continue }
                let before = (receiver.nextIndex, receiver.skippedCount)
                if let opened = try? receiver.openRecordingChanges(message, keyID: keyID) {
                    persisted = applying(opened.changes, to: persisted)
                    // Only a real message opens: the fuzzer may have rebuilt one byte for byte.
                    let index = Int(message.messageIndex)
                    precondition(index < messages.count && messages[index] == message, "bytes that are no sealed message opened")
                    precondition(model.deliver(message.messageIndex) == nil, "message \(index) opened against the rules")
                } else {
                    precondition(before == (receiver.nextIndex, receiver.skippedCount), "refused bytes changed the ratchet")
                }
            default:
                let snapshot = receiver.snapshot
                precondition(persisted == snapshot, "the changes saved so far do not rebuild the receiver's state")
                do {
                    receiver = try ReceivingRatchet(snapshot: persisted, maxSkippedKeys: window)
                } catch {
                    preconditionFailure("a receiver's own save does not restore: \(error)")
                }
                precondition(receiver.snapshot == snapshot, "a restored receiver saves differently")
            }
            precondition(receiver.nextIndex == model.next, "next index \(receiver.nextIndex), the rules \(model.next)")
            precondition(receiver.skippedCount == model.skipped.count, "\(receiver.skippedCount) skipped keys, the rules \(model.skipped.count)")
            precondition(receiver.skippedCount <= window, "more skipped keys than the window")
        }
    }

    /// One opening's changes written over a saved state, as a store's rows would be.
    static func applying(_ changes: ReceivingRatchet.Changes, to saved: ReceivingRatchet.Snapshot) -> ReceivingRatchet.Snapshot {
        precondition(changes.previousNextIndex == saved.nextIndex, "changes from index \(changes.previousNextIndex) over a state at \(saved.nextIndex)")
        var keys = Dictionary(uniqueKeysWithValues: saved.skipped.map { ($0.index, $0.key) })
        if let spent = changes.spent {
            precondition(keys.removeValue(forKey: spent) != nil, "spent key \(spent) was never saved")
        }
        for index in changes.evicted {
            precondition(keys.removeValue(forKey: index) != nil, "evicted key \(index) was never saved")
        }
        for kept in changes.kept {
            precondition(keys.updateValue(kept.key, forKey: kept.index) == nil, "key \(kept.index) saved twice")
        }
        let skipped = keys.keys.sorted().map { ReceivingRatchet.Snapshot.SkippedKey(index: $0, key: keys[$0]!) }
        return ReceivingRatchet.Snapshot(chainKey: changes.chainKey, nextIndex: changes.nextIndex, skipped: skipped)
    }

    /// The receiving rules over indices alone.
    struct Model {
        let window: Int
        var next: UInt32 = 0
        /// Ascending.
        var skipped: [UInt32] = []

        /// nil when the message opens, else the refusal the rules give.
        mutating func deliver(_ index: UInt32) -> RatchetError.Code? {
            if index < next {
                guard let position = skipped.firstIndex(of: index) else { return .replayed }
                skipped.remove(at: position)
                return nil
            }
            guard Int(index - next) <= window else { return .tooFarAhead }
            skipped += Array(next..<index)
            next = index + 1
            if skipped.count > window { skipped.removeFirst(skipped.count - window) }
            return nil
        }
    }
}
