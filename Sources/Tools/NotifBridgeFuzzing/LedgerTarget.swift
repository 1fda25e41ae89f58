import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
@_spi(Fuzzing) import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// Decrypted `HostEvent`s as the accessory handles them: validation first, then what passes is
/// applied to an in-memory store and to a model of the ledger rules (docs/PROTOCOL.md §6.3) kept
/// in plain Swift. The two must agree on every decision and on every record's state, so the SQL
/// that carries the rules out is checked against the rules themselves.
///
/// Events go to the store in batches, through `applyBatch`, as the daemon commits them (group
/// commit: one transaction, the burst state carried from event to event, remove-all under its
/// own savepoint). Each event's decision is checked against the model; every record and the
/// retention totals after each batch. A transaction per event ran about 260 inputs a second.
///
/// Input: records; a tag whose low two bits are 3 ends the batch and switches to key exchange
/// `body[0] % 4` (a new one gets the next epoch); any other record is one event's plaintext, and
/// ends the batch after it when bit 2 of its tag (4) is set. The input's end ends the last batch.
enum LedgerTarget {
    static let start = Date(timeIntervalSince1970: 1_778_490_000)

    /// One store for every input, emptied before each: opening and migrating a store took about
    /// 4 ms, most of a typical input's time. The lock keeps parallel tests from sharing it.
    private static let shared: Mutex<AccessoryStore> = {
        do {
            return Mutex(try AccessoryStore.inMemory())
        } catch {
            preconditionFailure("in-memory store: \(error)")
        }
    }()

    /// Returns how many events reached the store, so tests can tell that seeds get that far.
    @discardableResult
    static func run(_ bytes: [UInt8]) -> Int {
        shared.withLock { store in
            do {
                try store.eraseEverything()
            } catch {
                preconditionFailure("emptying the store: \(error)")
            }
            return run(bytes, on: store)
        }
    }

    private static func run(_ bytes: [UInt8], on store: AccessoryStore) -> Int {
        var model = LedgerModel()
        var burst = BurstLimiter(limit: .init())
        let conditions = AlertConditions(settings: .default, minuteOfDay: 12 * 60, now: .now)
        var exchangeID = exchange(0, in: store, model: &model)
        var input = FuzzInput(bytes)
        var step = 0
        var applied = 0
        var batch: [(event: HostEvent, exchangeID: UInt64)] = []
        func commit() {
            guard !batch.isEmpty else { return }
            defer { batch.removeAll() }
            let now = start.addingTimeInterval(Double(step))
            let results: [Result<ApplyOutcome, any Error>]
            do {
                results = try store.applyBatch(batch, now: now, conditions: conditions, burst: &burst)
            } catch {
                preconditionFailure("the store failed on a batch of valid events: \(error)")
            }
            precondition(results.count == batch.count, "\(batch.count) events gave \(results.count) results")
            for (item, result) in zip(batch, results) {
                let outcome: ApplyOutcome
                do {
                    outcome = try result.get()
                } catch {
                    preconditionFailure("the store failed on a valid event: \(error)")
                }
                model.check(item.event, outcome: outcome, epoch: model.epochs[item.exchangeID] ?? 0)
            }
            applied += batch.count
            model.checkAll(store)
        }
        while let (tag, body) = input.record() {
            step += 1
            if tag & 3 == 3 {
                commit()
                exchangeID = exchange(Int(body.first ?? 0) % 4, in: store, model: &model)
                continue
            }
            if let event = try? WireCodec.decode(HostEvent.self, from: body), (try? AccessorySession.validate(event)) != nil {
                batch.append((event, exchangeID))
            }
            if tag & 4 != 0 { commit() }
        }
        commit()
        return applied
    }

    /// Activates one of four fixed exchanges, as a completed key exchange does.
    private static func exchange(_ index: Int, in store: AccessoryStore, model: inout LedgerModel) -> UInt64 {
        let parameters = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "exchange-\(index)", encapsulatedKey: Data([UInt8(index)]))
        do {
            let epoch = try store.saveExchange(parameters, keyID: [UInt8(index)], now: start)
            model.activated(parameters.exchangeID, epoch: epoch)
        } catch {
            preconditionFailure("saving an exchange: \(error)")
        }
        return parameters.exchangeID
    }
}

/// The ledger rules over a dictionary keyed by identifier bytes, as SQLite compares them.
private struct LedgerModel {
    struct Key: Hashable {
        var source: [UInt8]
        var id: [UInt8]
        init(_ id: WireNotificationID) {
            source = Array(id.sourceIdentifier.utf8)
            self.id = Array(id.notificationIdentifier.utf8)
        }
    }

    /// A record as the rules see it, and whether its posting alerted (stored with its decision).
    struct Entry: Hashable {
        var state: LedgerState
        var alerted: Bool
    }

    var entries: [Key: Entry] = [:]
    var watermark: Revision?
    var epochs: [UInt64: Int64] = [:]

    /// A new exchange's epoch is above every earlier one; a known one keeps its epoch.
    mutating func activated(_ exchangeID: UInt64, epoch: Int64) {
        if let known = epochs[exchangeID] {
            precondition(known == epoch, "exchange \(exchangeHex(exchangeID)) moved from epoch \(known) to \(epoch)")
        } else {
            precondition(epochs.values.allSatisfy { $0 < epoch }, "a new exchange got epoch \(epoch), not above the earlier ones")
            epochs[exchangeID] = epoch
        }
    }

    /// One event's decision, against the rules applied to the model's state before it.
    mutating func check(_ event: HostEvent, outcome: ApplyOutcome, epoch: Int64) {
        let revision = Revision(epoch: epoch, sequence: event.sequence)
        let expected: LedgerDecision
        switch event.event {
        case .add(let add):
            let key = Key(add.notification.id)
            expected = NotificationLedger.decide(.add, at: revision, existing: entries[key]?.state, removeAllWatermark: watermark)
            apply(expected, key: key, revision: revision, alerted: outcome.alerted)
        case .update(let update):
            let key = Key(update.notification.id)
            expected = NotificationLedger.decide(.update, at: revision, existing: entries[key]?.state, removeAllWatermark: watermark)
            apply(expected, key: key, revision: revision, alerted: false)
        case .remove(let remove):
            let key = Key(remove.id)
            expected = NotificationLedger.decide(.remove, at: revision, existing: entries[key]?.state, removeAllWatermark: watermark)
            apply(expected, key: key, revision: revision, alerted: false)
        case .removeAll:
            expected = removeAll(at: revision, outcome: outcome)
        case nil:
            preconditionFailure("validation let an empty event through")
        }
        precondition(outcome.ledger == expected, "store decided \(outcome.ledger), the ledger rules \(expected) at \(revision)")
        // Only a new posting may alert; the policy and the burst limit may still keep it quiet.
        let isAdd = if case .add = event.event { true } else { false }
        precondition(!outcome.alerted || (outcome.ledger == .insert && isAdd), "alerted on \(outcome.ledger)")
    }

    private mutating func apply(_ decision: LedgerDecision, key: Key, revision: Revision, alerted: Bool) {
        switch decision {
        case .insert: entries[key] = Entry(state: LedgerState(revision: revision, removed: false), alerted: alerted)
        case .replace: entries[key]?.state.revision = revision
        case .markRemoved:
            entries[key] = Entry(state: LedgerState(revision: revision, removed: true), alerted: entries[key]?.alerted ?? false)
        case .ignore: break
        }
    }

    private mutating func removeAll(at revision: Revision, outcome: ApplyOutcome) -> LedgerDecision {
        if let watermark, revision <= watermark { return .ignore(.beforeRemoveAll) }
        watermark = revision
        var removed = 0
        for (key, entry) in entries where !entry.state.removed && entry.state.revision < revision {
            entries[key] = Entry(state: LedgerState(revision: revision, removed: true), alerted: entry.alerted)
            removed += 1
        }
        precondition(outcome.removedCount == removed, "remove-all at \(revision) removed \(outcome.removedCount) records; the rules remove \(removed)")
        return .markRemoved
    }

    /// Every record, removed ones included, matches the model.
    func checkAll(_ store: AccessoryStore) {
        let records: [StoredNotification]
        do {
            records = try store.notifications(includeRemoved: true)
        } catch {
            preconditionFailure("listing records: \(error)")
        }
        precondition(records.count == entries.count, "store holds \(records.count) records, the rules \(entries.count)")
        do {
            let totals = try store.retentionTotals()
            precondition(totals.kept == totals.counted, "retention's running totals \(totals.kept) differ from a fresh count \(totals.counted)")
        } catch {
            preconditionFailure("reading the totals: \(error)")
        }
        for record in records {
            let key = Key(record.notification.id)
            let state = Entry(state: LedgerState(revision: record.revision, removed: record.removed), alerted: record.alerted)
            precondition(entries[key] == state, "\(record.sourceIdentifier)/\(record.notificationIdentifier): store has \(state), the rules \(String(describing: entries[key]))")
        }
    }
}
