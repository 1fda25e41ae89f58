import Crypto
import Foundation

/// The receiving half of one direction of the internet ratchet. Messages may arrive late or out
/// of order: stepping past an index keeps its message key, up to `maxSkippedKeys`, and a key is
/// deleted when its message opens, so a replay finds nothing to open it with. A message that
/// fails is refused without changing anything. The caller persists the state (`snapshot`) after
/// every message that opens.
public struct ReceivingRatchet: Sendable {
    public private(set) var chainKey: SymmetricKey
    /// The index the chain key derives next; every lower index is either skipped (its key kept)
    /// or spent.
    public private(set) var nextIndex: UInt32
    private var skipped: [UInt32: SymmetricKey] = [:]
    /// Skipped indices in the order they were skipped, which is ascending because the chain only
    /// moves forward; entries spent since are dropped lazily. Lets eviction find the oldest
    /// without sorting 50,000 keys.
    private var order: [UInt32] = []
    private var orderStart = 0
    /// Chain keys at multiples of `checkpointInterval` above `nextIndex`, met while walking the
    /// chain: derived, never persisted, at most 50,000 / 1,024 of them.
    private var checkpoints: [UInt32: SymmetricKey] = [:]
    static let checkpointInterval: UInt32 = 1024
    /// Ratchet steps derived so far, for tests of how much work a message can cause.
    private(set) var stepsDerived = 0

    /// Entries in the eviction order, spent ones included: tests check that it stays bounded.
    var trackedIndexCount: Int { order.count - orderStart }

    /// How far ahead a message may be, and how many skipped keys are kept: Apple's 50,000 by
    /// default; a receiver short of memory may keep fewer and refuse more late messages.
    public let maxSkippedKeys: Int

    public init(chainKey: some DataProtocol, nextIndex: UInt32 = 0, maxSkippedKeys: Int = InternetRatchet.maxSkippedKeys) throws(RatchetError) {
        guard chainKey.count == InternetRatchet.chainKeyLength else {
            throw RatchetError(.malformed, "a chain key is \(InternetRatchet.chainKeyLength) bytes, got \(chainKey.count)")
        }
        guard (0...InternetRatchet.maxSkippedKeys).contains(maxSkippedKeys) else {
            throw RatchetError(.malformed, "a ratchet keeps 0 to \(InternetRatchet.maxSkippedKeys) skipped keys, not \(maxSkippedKeys)")
        }
        self.chainKey = SymmetricKey(data: Array(chainKey))
        self.nextIndex = nextIndex
        self.maxSkippedKeys = maxSkippedKeys
    }

    /// How many message keys are kept for messages that have not arrived.
    public var skippedCount: Int { skipped.count }

    public func isSkipped(_ index: UInt32) -> Bool { skipped[index] != nil }

    /// Opens a message for this chain, or refuses it and stays as it was.
    public mutating func open(_ message: RatchetMessage, keyID: [UInt8]) throws(RatchetError) -> Data {
        try open(message, keyID: keyID, recording: false).plaintext
    }

    /// Opens a message as `open` does, and says what changed, so that a store can persist the
    /// change (a row or two) instead of the whole state (up to 50,000 keys) after each message.
    public mutating func openRecordingChanges(_ message: RatchetMessage, keyID: [UInt8]) throws(RatchetError) -> (plaintext: Data, changes: Changes) {
        let (plaintext, changes) = try open(message, keyID: keyID, recording: true)
        // Recording was asked for, so the changes are there.
        return (plaintext, changes!)
    }

    /// Without `recording`, no copies of the kept keys are made: a jump ahead may keep 50,000.
    private mutating func open(_ message: RatchetMessage, keyID: [UInt8], recording: Bool) throws(RatchetError) -> (plaintext: Data, changes: Changes?) {
        guard message.keyID == keyID else {
            throw RatchetError(.unknownKeyID, "key ID \(hexString(message.keyID)) is not this exchange's \(hexString(keyID))")
        }
        let index = message.messageIndex
        if index < nextIndex {
            guard let key = skipped[index] else {
                throw RatchetError(.replayed, "message \(index) was opened before or is too old (next expected \(nextIndex))")
            }
            let plaintext = try Self.open(message, with: key)
            skipped[index] = nil
            return (plaintext, recording ? Changes(previousNextIndex: nextIndex, chainKey: chainKeyBytes, nextIndex: nextIndex, spent: index, kept: [], evicted: []) : nil)
        }
        guard index < .max else {
            throw RatchetError(.tooFarAhead, "message index \(index) is past the last one a sender uses")
        }
        let ahead = Int(index - nextIndex)
        guard ahead <= maxSkippedKeys else {
            throw RatchetError(.tooFarAhead, "message \(index) is \(ahead) ahead of the next expected (\(nextIndex)); at most \(maxSkippedKeys) are kept")
        }
        // Authenticate before deriving the keys to keep: from the nearest chain key known at or
        // below the index, so that once a stretch of the chain has been walked, a forgery far
        // ahead costs at most `checkpointInterval` steps instead of up to 50,000.
        // A walk from `nextIndex` itself passes every key to keep: hold them until it is known
        // whether to keep them.
        let (start, startKey) = nearestChainKey(atOrBelow: index)
        var passed: [SymmetricKey] = []
        var chain = startKey
        stepsDerived += Int(index - start) + 1
        for walked in start..<index {
            let (key, next) = InternetRatchet.step(chainKey: chain, index: walked)
            if start == nextIndex { passed.append(key) }
            chain = next
            if (walked + 1) % Self.checkpointInterval == 0 { checkpoints[walked + 1] = chain }
        }
        let (messageKey, next) = InternetRatchet.step(chainKey: chain, index: index)
        let plaintext = try Self.open(message, with: messageKey)
        let previousNextIndex = nextIndex

        if start != nextIndex {
            stepsDerived += Int(index - nextIndex)
            var skippedChain = chainKey
            for skippedIndex in nextIndex..<index {
                let (key, following) = InternetRatchet.step(chainKey: skippedChain, index: skippedIndex)
                passed.append(key)
                skippedChain = following
            }
        }
        var kept: [Snapshot.SkippedKey] = []
        if recording { kept.reserveCapacity(passed.count) }
        for (offset, key) in passed.enumerated() {
            let skippedIndex = nextIndex + UInt32(offset)
            skipped[skippedIndex] = key
            order.append(skippedIndex)
            if recording { kept.append(Snapshot.SkippedKey(index: skippedIndex, key: key.withUnsafeBytes { Data($0) })) }
        }
        chainKey = next
        nextIndex = index + 1
        if !checkpoints.isEmpty { checkpoints = checkpoints.filter { $0.key > nextIndex } }
        var evicted = evictOldest()
        guard recording else { return (plaintext, nil) }
        // A key kept and evicted by the same message was never persisted: leave it out of both.
        if let firstKept = kept.first?.index, let lastEvicted = evicted.last, lastEvicted >= firstKept {
            kept.removeAll { $0.index <= lastEvicted }
            evicted.removeAll { $0 >= firstKept }
        }
        return (plaintext, Changes(previousNextIndex: previousNextIndex, chainKey: chainKeyBytes, nextIndex: nextIndex, spent: nil, kept: kept, evicted: evicted))
    }

    private var chainKeyBytes: Data { chainKey.withUnsafeBytes { Data($0) } }

    private func nearestChainKey(atOrBelow index: UInt32) -> (UInt32, SymmetricKey) {
        let checkpoint = index / Self.checkpointInterval * Self.checkpointInterval
        if checkpoint > nextIndex, let key = checkpoints[checkpoint] {
            return (checkpoint, key)
        }
        return (nextIndex, chainKey)
    }

    private static func open(_ message: RatchetMessage, with key: SymmetricKey) throws(RatchetError) -> Data {
        do {
            return try FeatureCipher.open(message.sealed, using: key)
        } catch {
            throw RatchetError(.decryptFailed, "message \(message.messageIndex) does not authenticate under its key")
        }
    }

    /// Drops the oldest kept keys past the limit and returns their indices, ascending.
    private mutating func evictOldest() -> [UInt32] {
        var evicted: [UInt32] = []
        while skipped.count > maxSkippedKeys, orderStart < order.count {
            let index = order[orderStart]
            if skipped.removeValue(forKey: index) != nil { evicted.append(index) }
            orderStart += 1
        }
        // Spent entries stay in `order` until they reach the front; compact once they dominate, so
        // it stays within twice the live keys however messages interleave.
        let tooManySpent = order.count - orderStart > 2 * max(skipped.count, 1024)
        let mostlyEvicted = orderStart > 0 && orderStart >= order.count / 2
        if tooManySpent || mostlyEvicted {
            order = order[orderStart...].filter { skipped[$0] != nil }
            orderStart = 0
        }
        return evicted
    }
}

extension ReceivingRatchet {
    /// What one opened message changed: the new chain state, the kept key it used (`spent`), the
    /// keys it kept for the indices it skipped, and the oldest keys dropped to stay within the
    /// window. Applying it to the state saved before the message gives the state after it, and
    /// only to that state: a store checks `previousNextIndex` and that every key it deletes is
    /// there, so changes from a stale copy of the ratchet (which could open a message twice)
    /// are refused.
    public struct Changes: Sendable, Hashable {
        /// The next index before the message: the saved state these changes apply to.
        public var previousNextIndex: UInt32
        public var chainKey: Data
        public var nextIndex: UInt32
        public var spent: UInt32?
        /// Ascending by index.
        public var kept: [Snapshot.SkippedKey]
        /// Ascending; none of them is in `kept`.
        public var evicted: [UInt32]
    }

    /// What a receiver persists after each message it opens, and restores at start-up.
    public struct Snapshot: Sendable, Hashable, Codable {
        public struct SkippedKey: Sendable, Hashable, Codable {
            public var index: UInt32
            public var key: Data

            public init(index: UInt32, key: Data) {
                self.index = index
                self.key = key
            }
        }

        public var chainKey: Data
        public var nextIndex: UInt32
        /// Ascending by index.
        public var skipped: [SkippedKey]

        public init(chainKey: Data, nextIndex: UInt32, skipped: [SkippedKey]) {
            self.chainKey = chainKey
            self.nextIndex = nextIndex
            self.skipped = skipped
        }
    }

    public var snapshot: Snapshot {
        Snapshot(
            chainKey: chainKey.withUnsafeBytes { Data($0) },
            nextIndex: nextIndex,
            skipped: skipped.sorted { $0.key < $1.key }.map { Snapshot.SkippedKey(index: $0.key, key: $0.value.withUnsafeBytes { Data($0) }) }
        )
    }

    /// Restores a saved state, refusing one that no receiver could have written.
    public init(snapshot: Snapshot, maxSkippedKeys: Int = InternetRatchet.maxSkippedKeys) throws(RatchetError) {
        try self.init(chainKey: snapshot.chainKey, nextIndex: snapshot.nextIndex, maxSkippedKeys: maxSkippedKeys)
        guard snapshot.skipped.count <= maxSkippedKeys else {
            throw RatchetError(.malformed, "a saved ratchet holds \(snapshot.skipped.count) skipped keys; at most \(maxSkippedKeys)")
        }
        var previous: UInt32?
        for entry in snapshot.skipped {
            guard entry.index < snapshot.nextIndex, previous.map({ $0 < entry.index }) ?? true, entry.key.count == 32 else {
                throw RatchetError(.malformed, "a saved skipped key (index \(entry.index)) is out of order, not below \(snapshot.nextIndex), or not 32 bytes")
            }
            skipped[entry.index] = SymmetricKey(data: entry.key)
            order.append(entry.index)
            previous = entry.index
        }
    }
}
