import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire

/// Applying host events: read the ledger state, ask ``AlertPlanner`` for the plan, write it.
/// The store decides nothing itself and calls nothing outside it while a write is open.
extension AccessoryStore {
    public struct UnknownExchange: Error, CustomStringConvertible {
        public var exchangeID: UInt64
        public var description: String { "no stored key exchange \(exchangeHex(exchangeID))" }
    }

    /// A sequence SQLite's signed integers cannot hold; validation refuses such events first.
    public struct SequenceOutOfRange: Error, CustomStringConvertible {
        public var sequence: UInt64
        public var description: String { "event sequence \(sequence) is above \(ContentLimits.maxSequence)" }
    }

    /// An event in a batch that saves ratchet changes could not be stored: the batch is undone.
    public struct InternetBatchFailed: Error, CustomStringConvertible {
        public var underlying: any Error
        public var description: String { "an event that came over the internet could not be stored, so nothing of its batch was: \(underlying)" }
    }

    /// Applies one host event in one transaction, and then the retention limits.
    /// - Parameter burst: the burst state; it moves by the plan once the transaction commits.
    public func apply(
        _ event: HostEvent,
        exchangeID: UInt64,
        now: Date,
        conditions: AlertConditions,
        burst: inout BurstLimiter
    ) throws -> ApplyOutcome {
        try applyBatch([(event, exchangeID)], now: now, conditions: conditions, burst: &burst)[0].get()
    }

    /// Applies events that arrived together in one transaction: one fsync for all of them
    /// (group commit). A failing event undoes only itself: every event but remove-all writes
    /// with one statement, which SQLite undoes by itself when it fails; remove-all writes two,
    /// so it alone gets a savepoint (a savepoint for every event was 5% of the daemon's CPU).
    /// Each event is planned against the burst state its predecessors left; `burst` takes the
    /// steps of the events that were stored, and only once everything has committed.
    /// Receipts may be sent for every successful result once this returns.
    /// - Parameter opened: for events that came over the internet, what opening their messages
    ///   changed in the receiving ratchets, saved in the same transaction
    ///   (AccessoryStore+Ratchet.swift says why). Such a batch is all or nothing: if a change
    ///   cannot be saved or an event cannot be stored, nothing is (`InternetBatchFailed`), since
    ///   a key spent without its event stored would refuse the relay's redelivery as a replay.
    public func applyBatch(
        _ events: [(event: HostEvent, exchangeID: UInt64)],
        opened: [(exchangeID: UInt64, changes: ReceivingRatchet.Changes)] = [],
        now: Date,
        conditions: AlertConditions,
        burst: inout BurstLimiter
    ) throws -> [Result<ApplyOutcome, any Error>] {
        var planned = burst
        let results = try write { db in
            for item in opened {
                try Self.save(item.changes, exchangeID: item.exchangeID, db)
            }
            var batch = BatchContext(now: now)
            var results: [Result<Applied, any Error>] = []
            for item in events {
                func applyItem() throws -> Applied {
                    try Self.apply(item.event, exchangeID: item.exchangeID, batch: &batch, conditions: conditions, burst: planned, db: db)
                }
                let result = Result<Applied, any Error> {
                    guard case .removeAll = item.event.event else { return try applyItem() }
                    var applied: Applied?
                    try db.inSavepoint {
                        applied = try applyItem()
                        return .commit
                    }
                    // inSavepoint returned, so its body ran to `.commit` and set it.
                    return applied!
                }
                if case .success(let applied) = result, let step = applied.outcome.plan.burst { planned.advance(step) }
                if !opened.isEmpty, case .failure(let error) = result { throw InternetBatchFailed(underlying: error) }
                results.append(result)
            }
            let pruned = try retention.enforce(db, now: now)
            return results.map { result in
                result.map { applied in
                    // A record retention just pruned is not reported as stored.
                    guard let rowid = applied.rowid, pruned.contains(rowid) else { return applied.outcome }
                    var outcome = applied.outcome
                    outcome.record = nil
                    return outcome
                }
            }
        }
        burst = planned
        return results
    }

    /// An event's outcome, and the row its record is in (to tell whether retention pruned it).
    private struct Applied {
        var outcome: ApplyOutcome
        var rowid: Int64?
    }

    private static func apply(
        _ event: HostEvent,
        exchangeID: UInt64,
        batch: inout BatchContext,
        conditions: AlertConditions,
        burst: BurstLimiter,
        db: Database
    ) throws -> Applied {
        let now = batch.now
        let epoch = try batch.epoch(of: exchangeID, db)
        guard event.sequence <= ContentLimits.maxSequence else { throw SequenceOutOfRange(sequence: event.sequence) }
        let revision = Revision(epoch: epoch, sequence: event.sequence)
        let notification: WireNotification?
        switch event.event {
        case .add(let add): notification = add.notification
        case .update(let update): notification = update.notification
        case .remove(let remove): notification = WireNotification.with { $0.id = remove.id }
        case .removeAll, nil: notification = nil
        }
        let existing = try notification.flatMap { try ledgerState(db, of: $0.id) }
        let plan = AlertPlanner.plan(
            event.event, at: revision,
            existing: existing?.state,
            removeAllWatermark: try batch.watermark(db),
            conditions: conditions, burst: burst
        )
        guard plan.stores else {
            let record = try notification.flatMap { try fetch(db, source: $0.id.sourceIdentifier, id: $0.id.notificationIdentifier) }
            return Applied(outcome: ApplyOutcome(plan: plan, record: record), rowid: existing?.rowid)
        }
        guard let notification else {
            let removed = try removeAll(at: revision, stamp: batch.stamp, db: db)
            batch.removedAll(at: revision)
            return Applied(outcome: ApplyOutcome(plan: plan, record: nil, removedCount: removed))
        }
        var alerting: WireAlertingContext?
        if case .add(let add) = event.event { alerting = add.alerting }
        try write(plan, notification: notification, alerting: alerting, exists: existing != nil, revision: revision, stamp: batch.stamp, db: db)
        // An update keeps a row's rowid, an upsert that conflicts too; a new row has the last one.
        let rowid = existing?.rowid ?? db.lastInsertedRowID
        if plan.ledger == .insert {
            // Exactly what was written; reading it back would decode it all again.
            return Applied(outcome: ApplyOutcome(plan: plan, record: StoredNotification(
                notification: notification, alerting: alerting, removed: false, revision: revision,
                receivedAt: now, updatedAt: now, alertDecision: plan.decision
            )), rowid: rowid)
        }
        let record = try fetch(db, source: notification.id.sourceIdentifier, id: notification.id.notificationIdentifier)
        return Applied(outcome: ApplyOutcome(plan: plan, record: record), rowid: rowid)
    }

    /// The ledger's view of a stored record: its revision and whether it was removed.
    private static func ledgerState(_ db: Database, of id: WireNotificationID) throws -> (state: LedgerState, rowid: Int64)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT rowid, rev_epoch, rev_seq, removed FROM notification WHERE source_id = ? AND notification_id = ?"),
            arguments: [id.sourceIdentifier, id.notificationIdentifier]
        ).map {
            (LedgerState(revision: Revision(epoch: $0["rev_epoch"], sequence: UInt64(bitPattern: $0["rev_seq"] as Int64)), removed: $0["removed"]), $0["rowid"])
        }
    }

    private static func write(
        _ plan: AlertPlan,
        notification: WireNotification,
        alerting: WireAlertingContext?,
        exists: Bool,
        revision: Revision,
        stamp: DatabaseValue,
        db: Database
    ) throws {
        // Arguments are written out as array literals: building them by concatenating arrays of
        // existentials cast every element again, a tenth of a stored notification's CPU.
        let source = notification.id.sourceIdentifier, id = notification.id.notificationIdentifier
        switch plan.ledger {
        case .ignore:
            break
        case .insert:
            // An upsert, not INSERT OR REPLACE: a replacing delete fires no delete trigger, and the
            // running totals (migration v4) would count the record twice.
            try db.execute(cached: """
                    INSERT INTO notification
                    (source_id, notification_id, payload, alerting, removed, rev_epoch, rev_seq, received_at, updated_at, alert_decision)
                    VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
                    ON CONFLICT (source_id, notification_id) DO UPDATE SET
                    payload = excluded.payload, alerting = excluded.alerting, removed = 0, rev_epoch = excluded.rev_epoch,
                    rev_seq = excluded.rev_seq, received_at = excluded.received_at, updated_at = excluded.updated_at,
                    alert_decision = excluded.alert_decision
                    """,
                arguments: [
                    source, id, try notification.serializedBytes() as Data, try alerting.map { try $0.serializedBytes() as Data },
                    revision.epoch, Int64(revision.sequence), stamp, stamp, try plan.decision.map(encodeDecision),
                ]
            )
        case .replace:
            // The content only: the decision made when it was posted stays, so it never re-alerts.
            try db.execute(cached: "UPDATE notification SET payload = ?, rev_epoch = ?, rev_seq = ?, updated_at = ? WHERE source_id = ? AND notification_id = ?",
                arguments: [try notification.serializedBytes() as Data, revision.epoch, Int64(revision.sequence), stamp, source, id]
            )
        case .markRemoved where !exists:
            try db.execute(cached: """
                    INSERT INTO notification
                    (source_id, notification_id, payload, alerting, removed, rev_epoch, rev_seq, received_at, updated_at)
                    VALUES (?, ?, ?, NULL, 1, ?, ?, ?, ?)
                    """,
                arguments: [source, id, try notification.serializedBytes() as Data, revision.epoch, Int64(revision.sequence), stamp, stamp]
            )
        case .markRemoved:
            try db.execute(cached: "UPDATE notification SET removed = 1, rev_epoch = ?, rev_seq = ?, updated_at = ? WHERE source_id = ? AND notification_id = ?",
                arguments: [revision.epoch, Int64(revision.sequence), stamp, source, id]
            )
        }
    }

    /// Raises the watermark and marks every older live record removed; returns how many.
    private static func removeAll(at revision: Revision, stamp: DatabaseValue, db: Database) throws -> Int {
        try db.execute(cached: "INSERT OR REPLACE INTO remove_all_watermark (id, rev_epoch, rev_seq) VALUES (1, ?, ?)", arguments: [revision.epoch, Int64(revision.sequence)])
        try db.execute(cached: """
                UPDATE notification SET removed = 1, rev_epoch = ?, rev_seq = ?, updated_at = ?
                WHERE NOT removed AND (rev_epoch < ? OR (rev_epoch = ? AND rev_seq < ?))
                """,
            arguments: [revision.epoch, Int64(revision.sequence), stamp, revision.epoch, revision.epoch, Int64(revision.sequence)]
        )
        return db.changesCount
    }

    fileprivate static func watermark(_ db: Database) throws -> Revision? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT rev_epoch, rev_seq FROM remove_all_watermark WHERE id = 1")).map {
            Revision(epoch: $0["rev_epoch"], sequence: UInt64(bitPattern: $0["rev_seq"] as Int64))
        }
    }
}

/// What one batch's events share, read or formatted once rather than for each event.
private struct BatchContext {
    let now: Date
    /// `now` as the store writes it: GRDB formats a `Date` with a `DateFormatter` at every
    /// binding, and each write binds it twice.
    let stamp: DatabaseValue
    /// Exchanges' epochs as read in this transaction (no statement in a batch changes one).
    private var epochs: [UInt64: Int64] = [:]
    /// The remove-all watermark once read; a remove-all in the batch raises it.
    private var knownWatermark: Revision??

    init(now: Date) {
        self.now = now
        stamp = now.databaseValue
    }

    mutating func epoch(of exchangeID: UInt64, _ db: Database) throws -> Int64 {
        if let epoch = epochs[exchangeID] { return epoch }
        guard let epoch = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT epoch FROM key_exchange WHERE exchange_id = ?"),
            arguments: [Int64(bitPattern: exchangeID)]
        ) else {
            throw AccessoryStore.UnknownExchange(exchangeID: exchangeID)
        }
        epochs[exchangeID] = epoch
        return epoch
    }

    mutating func watermark(_ db: Database) throws -> Revision? {
        if let known = knownWatermark { return known }
        let watermark = try AccessoryStore.watermark(db)
        knownWatermark = .some(watermark)
        return watermark
    }

    mutating func removedAll(at revision: Revision) {
        knownWatermark = .some(revision)
    }
}
