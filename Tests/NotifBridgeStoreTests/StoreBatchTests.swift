import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// A batch (one transaction for the events that arrived together) reads the epoch and the
/// remove-all watermark once, gives only remove-all a savepoint, and learns which records
/// retention pruned from the rowids it deleted. None of that may change a decision.
@Suite("Store batches")
struct StoreBatchTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 5, count: 1120))
    let start = Date(timeIntervalSince1970: 1_778_490_000)

    private func event(_ sequence: UInt64, _ operation: HostOperation) throws -> HostEvent {
        try .test(sequence, operation, now: start)
    }

    private func add(_ id: String) -> HostOperation {
        .add(HostNotification(source: "s", id: id, sourceName: "S", body: "b"), .standard)
    }

    private func open(_ directory: TemporaryDirectory, _ name: String, _ retention: Retention = Retention(maxCount: 100_000, maxBytes: 1 << 30, maxAgeDays: 3650)) throws -> AccessoryStore {
        let store = try AccessoryStore(path: directory.path + "/\(name).sqlite", retention: retention)
        try store.saveExchange(exchange, keyID: [1], now: start)
        return store
    }

    /// What a caller sees of one result; errors by type, since two stores throw equal ones.
    private func summary(_ result: Result<ApplyOutcome, any Error>) -> String {
        switch result {
        case .success(let outcome):
            let record = outcome.record.map { "\($0.notificationIdentifier)@\($0.revision.sequence)\($0.removed ? "-removed" : "")" } ?? "none"
            return "\(outcome.ledger) alerted=\(outcome.alerted) removed=\(outcome.removedCount) record=\(record)"
        case .failure(let error):
            return "error \(type(of: error))"
        }
    }

    @Test("A remove-all raises the watermark for the events after it in the same batch")
    func removeAllInsideBatch() throws {
        let directory = try TemporaryDirectory("batch")
        defer { directory.remove() }
        let store = try open(directory, "a")
        var burst = BurstLimiter(limit: .unlimited)
        let results = try store.applyBatch([
            (try event(1, add("a")), exchange.exchangeID),
            (try event(5, .removeAll), exchange.exchangeID),
            (try event(3, add("b")), exchange.exchangeID),
            (try event(7, add("c")), exchange.exchangeID),
        ], now: start, conditions: .noon(), burst: &burst)
        #expect(try results[1].get().removedCount == 1)
        #expect(try results[2].get().ledger == LedgerDecision.ignore(.beforeRemoveAll))
        #expect(try results[3].get().ledger == LedgerDecision.insert)
        #expect(try store.notifications().map(\.notificationIdentifier) == ["c"])
    }

    /// Events from many batch sizes, with unknown exchanges and out-of-range sequences mixed in,
    /// decide and store exactly as the same events applied one at a time.
    @Test("A batch decides as the same events one at a time", arguments: [1, 2, 3, 4])
    func batchEqualsSingles(seed: UInt64) throws {
        let directory = try TemporaryDirectory("batch")
        defer { directory.remove() }
        let batched = try open(directory, "batched")
        let single = try open(directory, "single")
        var random = SeededGenerator(seed: seed)
        var items: [(event: HostEvent, exchangeID: UInt64)] = []
        for _ in 0..<200 {
            let id = "n\(Int.random(in: 0..<8, using: &random))"
            let operation: HostOperation = switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: add(id)
            case 5..<7: .update(HostNotification(source: "s", id: id, sourceName: "S", body: "edited"))
            case 7..<9: .remove(source: "s", id: id)
            default: .removeAll
            }
            let sequence = Int.random(in: 0..<50, using: &random) == 0 ? ContentLimits.maxSequence + 1 : UInt64.random(in: 1...300, using: &random)
            let exchangeID = Int.random(in: 0..<20, using: &random) == 0 ? 0xDEAD : exchange.exchangeID
            items.append((try event(sequence, operation), exchangeID))
        }
        var batchedBurst = BurstLimiter(limit: .init(maxAlerts: 5, windowSeconds: 600))
        var singleBurst = batchedBurst
        var batchedResults: [String] = []
        var rest = items[...]
        while !rest.isEmpty {
            let size = Int.random(in: 1...12, using: &random)
            let batch = Array(rest.prefix(size))
            rest = rest.dropFirst(batch.count)
            batchedResults += try batched.applyBatch(batch, now: start, conditions: .noon(), burst: &batchedBurst).map(summary)
        }
        let singleResults = try items.map { item in
            try single.applyBatch([item], now: start, conditions: .noon(), burst: &singleBurst).map(summary)[0]
        }
        for (index, (a, b)) in zip(batchedResults, singleResults).enumerated() {
            #expect(a == b, "event \(index)")
        }
        let records = { (store: AccessoryStore) in
            try store.notifications(includeRemoved: true).map { "\($0.notificationIdentifier)@\($0.revision.sequence) \($0.removed) \($0.alerted)" }.sorted()
        }
        #expect(try records(batched) == records(single))
    }

    @Test("A record retention prunes in its own batch comes back without its record; the others keep theirs")
    func prunedInOwnBatch() throws {
        let directory = try TemporaryDirectory("batch")
        defer { directory.remove() }
        let store = try open(directory, "a", Retention(maxCount: 2))
        var burst = BurstLimiter(limit: .unlimited)
        _ = try store.applyBatch([(try event(1, add("old")), exchange.exchangeID)], now: start, conditions: .noon(), burst: &burst)
        // "old" keeps its first time when updated, so it is the oldest and the first to go.
        let results = try store.applyBatch([
            (try event(2, .update(HostNotification(source: "s", id: "old", sourceName: "S", body: "edited"))), exchange.exchangeID),
            (try event(3, add("x")), exchange.exchangeID),
            (try event(4, add("y")), exchange.exchangeID),
        ], now: start.addingTimeInterval(60), conditions: .noon(), burst: &burst)
        #expect(try results.map { try $0.get().record?.notificationIdentifier } == [nil, "x", "y"])
        #expect(try results[0].get().ledger == LedgerDecision.replace)
        #expect(try store.notifications().map(\.notificationIdentifier).sorted() == ["x", "y"])
    }

    /// Lowering retention on a full store pruned the whole excess in the next notification's
    /// transaction: on a nearly full disk its WAL did not fit, and every notification failed.
    /// Now each commit prunes at most `maxPrunedPerCommit`, oldest first; the commits after it
    /// take the rest. An excess of exactly the limit goes in one commit, one more takes two.
    @Test("an excess of the per-commit limit is pruned in one commit, one more in two; the newest stay", arguments: [0, 1])
    func pruningInChunks(pastLimit: Int) throws {
        let directory = try TemporaryDirectory("batch-prune")
        defer { directory.remove() }
        let keep = 10
        let stored = keep + Retention.maxPrunedPerCommit + pastLimit - 1
        var burst = BurstLimiter(limit: .unlimited)
        let roomy = try open(directory, "a")
        var sequence: UInt64 = 0
        for chunk in stride(from: 0, to: stored, by: 100) {
            let events = try (chunk..<min(chunk + 100, stored)).map { index in
                sequence += 1
                return (try event(sequence, add("n\(index)")), exchange.exchangeID)
            }
            _ = try roomy.applyBatch(events, now: start, conditions: .noon(), burst: &burst)
        }
        try roomy.close()

        let store = try AccessoryStore(path: directory.path + "/a.sqlite", retention: Retention(maxCount: keep, maxBytes: 1 << 30, maxAgeDays: 3650))
        var counts: [Int] = []
        for id in ["new-1", "new-2"] {
            sequence += 1
            _ = try store.applyBatch([(try event(sequence, add(id)), exchange.exchangeID)], now: start.addingTimeInterval(60), conditions: .noon(), burst: &burst)
            counts.append(try store.notifications(includeRemoved: true).count)
        }
        // One past the limit leaves one record over after the first commit.
        #expect(counts == [keep + pastLimit, keep])
        let kept = try store.notifications(includeRemoved: true).map(\.notificationIdentifier)
        #expect(kept.prefix(2) == ["new-2", "new-1"], "the newest are kept")
        #expect(Set(kept) == Set(["new-1", "new-2"] + (stored - keep + 2..<stored).map { "n\($0)" }))
    }
}
