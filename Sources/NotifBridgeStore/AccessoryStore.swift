import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire

/// The accessory's durable state in one SQLite file (WAL): key exchanges and notifications.
///
/// Every event is applied in one write transaction, so what a receipt acknowledges is on disk
/// before the receipt leaves; a crash loses nothing acknowledged.
public final class AccessoryStore: Sendable {
    /// A pool (WAL) on disk; a queue for `inMemory` (AccessoryStore+Memory.swift).
    let database: any DatabaseWriter
    public let path: String
    public let retention: Retention

    /// Opens (creating and migrating if needed) the store at `path`, mode 0600.
    public init(path: String, retention: Retention = .default) throws {
        self.path = path
        self.retention = retention
        let existed = FileManager.default.fileExists(atPath: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        database = try DatabasePool(path: path, configuration: configuration)
        if !existed { chmod(path, 0o600) }
        try Self.migrator.migrate(database)
    }

    init(memory: DatabaseQueue, retention: Retention) throws {
        path = ":memory:"
        self.retention = retention
        database = memory
        try Self.migrator.migrate(database)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "key_exchange") { t in
                t.autoIncrementedPrimaryKey("epoch")
                t.column("exchange_id", .integer).notNull().unique()
                t.column("key_id", .blob).notNull()
                t.column("cipher_suite", .text).notNull()
                t.column("version", .text).notNull()
                t.column("identifier", .text).notNull()
                t.column("encapsulated_key", .blob).notNull()
                t.column("active", .boolean).notNull()
                t.column("created_at", .datetime).notNull()
            }
            try db.create(table: "notification") { t in
                t.column("source_id", .text).notNull()
                t.column("notification_id", .text).notNull()
                t.primaryKey(["source_id", "notification_id"])
                t.column("payload", .blob).notNull()
                t.column("alerting", .blob)
                t.column("alerted", .boolean).notNull()
                t.column("removed", .boolean).notNull()
                t.column("rev_epoch", .integer).notNull()
                t.column("rev_seq", .integer).notNull()
                t.column("received_at", .datetime).notNull()
                t.column("updated_at", .datetime).notNull()
            }
            try db.create(index: "notification_by_time", on: "notification", columns: ["removed", "received_at"])
            // One row: the newest remove-all, below which no add or update applies.
            try db.create(table: "remove_all_watermark") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("rev_epoch", .integer).notNull()
                t.column("rev_seq", .integer).notNull()
            }
        }
        migrator.registerMigration("v2: alert decisions") { db in
            try db.alter(table: "notification") { t in
                t.add(column: "alert_decision", .text)
            }
        }
        return migrator
    }

    // MARK: Key exchanges

    /// The exchange made with the key `keyID`, if the accessory still holds one.
    public func activeExchange(keyID: [UInt8]) throws -> KeyExchangeParameters? {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM key_exchange WHERE active AND key_id = ? ORDER BY epoch DESC LIMIT 1", arguments: [Data(keyID)]) else {
                return nil
            }
            return KeyExchangeParameters(
                cipherSuite: row["cipher_suite"],
                version: row["version"],
                identifier: row["identifier"],
                encapsulatedKey: row["encapsulated_key"]
            )
        }
    }

    /// Records a completed exchange as the only active one and returns its epoch.
    @discardableResult
    public func saveExchange(_ parameters: KeyExchangeParameters, keyID: [UInt8], now: Date) throws -> Int64 {
        try database.write { db in
            try db.execute(sql: "UPDATE key_exchange SET active = 0")
            let id = Int64(bitPattern: parameters.exchangeID)
            if let epoch = try Int64.fetchOne(db, sql: "SELECT epoch FROM key_exchange WHERE exchange_id = ?", arguments: [id]) {
                try db.execute(sql: "UPDATE key_exchange SET active = 1 WHERE epoch = ?", arguments: [epoch])
                return epoch
            }
            try db.execute(
                sql: """
                    INSERT INTO key_exchange (exchange_id, key_id, cipher_suite, version, identifier, encapsulated_key, active, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, 1, ?)
                    """,
                arguments: [id, Data(keyID), parameters.cipherSuite, parameters.version, parameters.identifier, parameters.encapsulatedKey, now]
            )
            return db.lastInsertedRowID
        }
    }

    /// Deactivates an exchange; its row stays so epochs keep their order.
    public func forgetExchange(_ exchangeID: UInt64) throws {
        try database.write { db in
            try db.execute(sql: "UPDATE key_exchange SET active = 0 WHERE exchange_id = ?", arguments: [Int64(bitPattern: exchangeID)])
        }
    }

    // MARK: Notifications

    public struct UnknownExchange: Error, CustomStringConvertible {
        public var exchangeID: UInt64
        public var description: String { "no stored key exchange \(exchangeHex(exchangeID))" }
    }

    /// A sequence SQLite's signed integers cannot hold; validation refuses such events first.
    public struct SequenceOutOfRange: Error, CustomStringConvertible {
        public var sequence: UInt64
        public var description: String { "event sequence \(sequence) is above \(ContentLimits.maxSequence)" }
    }

    /// Applies one host event under the ledger rules, in one transaction, and then the
    /// retention limits.
    /// - Parameters:
    ///   - policy: the alert decision for an add.
    ///   - admit: asked only when a new notification would alert and may be held back (burst);
    ///     false holds it back. Urgent alerts (`bypassesBurstLimit`) are never asked about.
    public func apply(
        _ event: HostEvent,
        exchangeID: UInt64,
        now: Date,
        policy: (Notifbridge_V1_AddNotification) -> AlertDecision,
        admit: () -> Bool = { true }
    ) throws -> ApplyOutcome {
        try applyBatch([(event, exchangeID)], now: now, policy: policy, admit: admit)[0].get()
    }

    /// Applies events that arrived together in one transaction: one fsync for all of them
    /// (group commit), each in its own savepoint so a failing event undoes only itself.
    /// Receipts may be sent for every successful result once this returns.
    public func applyBatch(
        _ events: [(event: HostEvent, exchangeID: UInt64)],
        now: Date,
        policy: (Notifbridge_V1_AddNotification) -> AlertDecision,
        admit: () -> Bool = { true }
    ) throws -> [Result<ApplyOutcome, any Error>] {
        try database.write { db in
            var results: [Result<ApplyOutcome, any Error>] = []
            for item in events {
                var result: Result<ApplyOutcome, any Error> = .failure(UnknownExchange(exchangeID: item.exchangeID))
                do {
                    try db.inSavepoint {
                        result = .success(try Self.apply(item.event, exchangeID: item.exchangeID, now: now, policy: policy, admit: admit, db: db))
                        return .commit
                    }
                } catch {
                    result = .failure(error)
                }
                results.append(result)
            }
            guard try retention.enforce(db, now: now) else { return results }
            return try results.map { result in
                guard case .success(let outcome) = result else { return result }
                return .success(try Self.refreshed(outcome, db: db))
            }
        }
    }

    /// The record as it stands after retention ran (it may have been pruned).
    private static func refreshed(_ outcome: ApplyOutcome, db: Database) throws -> ApplyOutcome {
        guard let record = outcome.record else { return outcome }
        var refreshed = outcome
        refreshed.record = try fetch(db, source: record.sourceIdentifier, id: record.notificationIdentifier)
        return refreshed
    }

    private static func apply(
        _ event: HostEvent,
        exchangeID: UInt64,
        now: Date,
        policy: (Notifbridge_V1_AddNotification) -> AlertDecision,
        admit: () -> Bool,
        db: Database
    ) throws -> ApplyOutcome {
        guard let epoch = try Int64.fetchOne(db.cachedStatement(sql: "SELECT epoch FROM key_exchange WHERE exchange_id = ?"), arguments: [Int64(bitPattern: exchangeID)]) else {
            throw UnknownExchange(exchangeID: exchangeID)
        }
        guard event.sequence <= ContentLimits.maxSequence else { throw SequenceOutOfRange(sequence: event.sequence) }
        let revision = Revision(epoch: epoch, sequence: event.sequence)
        let watermark = try Self.watermark(db)
        switch event.event {
        case .add(let add):
            let decision = policy(add)
            return try Self.apply(.add(shouldAlert: decision.alerts), notification: add.notification, alerting: add.alerting, decision: decision, admit: admit, revision: revision, watermark: watermark, now: now, db: db)
        case .update(let update):
            return try Self.apply(.update, notification: update.notification, alerting: nil, decision: nil, admit: admit, revision: revision, watermark: watermark, now: now, db: db)
        case .remove(let remove):
            var tombstone = WireNotification()
            tombstone.id = remove.id
            return try Self.apply(.remove, notification: tombstone, alerting: nil, decision: nil, admit: admit, revision: revision, watermark: watermark, now: now, db: db)
        case .removeAll:
            if let watermark, revision <= watermark {
                return ApplyOutcome(decision: .ignore(.beforeRemoveAll), stored: false, alerted: false, record: nil)
            }
            try db.execute(cached: "INSERT OR REPLACE INTO remove_all_watermark (id, rev_epoch, rev_seq) VALUES (1, ?, ?)", arguments: [revision.epoch, Int64(revision.sequence)])
            try db.execute(cached: """
                    UPDATE notification SET removed = 1, rev_epoch = ?, rev_seq = ?, updated_at = ?
                    WHERE NOT removed AND (rev_epoch < ? OR (rev_epoch = ? AND rev_seq < ?))
                    """,
                arguments: [revision.epoch, Int64(revision.sequence), now, revision.epoch, revision.epoch, Int64(revision.sequence)]
            )
            return ApplyOutcome(decision: .markRemoved, stored: true, alerted: false, record: nil, removedCount: db.changesCount)
        case nil:
            return ApplyOutcome(decision: .ignore(.stale), stored: false, alerted: false, record: nil)
        }
    }

    private static func apply(
        _ operation: NotificationLedger.Operation,
        notification: WireNotification,
        alerting: WireAlertingContext?,
        decision alertDecision: AlertDecision?,
        admit: () -> Bool,
        revision: Revision,
        watermark: Revision?,
        now: Date,
        db: Database
    ) throws -> ApplyOutcome {
        let key: [any DatabaseValueConvertible] = [notification.id.sourceIdentifier, notification.id.notificationIdentifier]
        let existing = try fetch(db, source: notification.id.sourceIdentifier, id: notification.id.notificationIdentifier)
        let state = existing.map { LedgerState(revision: $0.revision, removed: $0.removed, alerted: $0.alerted) }
        let decision = NotificationLedger.decide(operation, at: revision, existing: state, removeAllWatermark: watermark)
        switch decision {
        case .ignore:
            return ApplyOutcome(decision: decision, stored: false, alerted: false, record: existing)
        case .insert(let wantsAlert):
            var recorded = alertDecision
            var alert = wantsAlert
            if wantsAlert, alertDecision?.bypassesBurstLimit != true, !admit() {
                recorded = alertDecision?.coalesced()
                alert = false
            }
            try db.execute(cached: """
                    INSERT OR REPLACE INTO notification
                    (source_id, notification_id, payload, alerting, alerted, removed, rev_epoch, rev_seq, received_at, updated_at, alert_decision)
                    VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
                    """,
                arguments: StatementArguments(key + [
                    try notification.serializedBytes() as Data, try alerting.map { try $0.serializedBytes() as Data },
                    alert, revision.epoch, Int64(revision.sequence), now, now, try recorded.map(encodeDecision),
                ])
            )
            return ApplyOutcome(decision: decision, stored: true, alerted: alert, record: try fetch(db, source: notification.id.sourceIdentifier, id: notification.id.notificationIdentifier))
        case .replace:
            try db.execute(cached: "UPDATE notification SET payload = ?, rev_epoch = ?, rev_seq = ?, updated_at = ? WHERE source_id = ? AND notification_id = ?",
                arguments: StatementArguments([try notification.serializedBytes() as Data, revision.epoch, Int64(revision.sequence), now] + key)
            )
            return ApplyOutcome(decision: decision, stored: true, alerted: false, record: try fetch(db, source: notification.id.sourceIdentifier, id: notification.id.notificationIdentifier))
        case .markRemoved:
            if existing == nil {
                try db.execute(cached: """
                        INSERT INTO notification
                        (source_id, notification_id, payload, alerting, alerted, removed, rev_epoch, rev_seq, received_at, updated_at)
                        VALUES (?, ?, ?, NULL, 0, 1, ?, ?, ?, ?)
                        """,
                    arguments: StatementArguments(key + [try notification.serializedBytes() as Data, revision.epoch, Int64(revision.sequence), now, now])
                )
            } else {
                try db.execute(cached: "UPDATE notification SET removed = 1, rev_epoch = ?, rev_seq = ?, updated_at = ? WHERE source_id = ? AND notification_id = ?",
                    arguments: StatementArguments([revision.epoch, Int64(revision.sequence), now] + key)
                )
            }
            return ApplyOutcome(decision: decision, stored: true, alerted: false, record: try fetch(db, source: notification.id.sourceIdentifier, id: notification.id.notificationIdentifier))
        }
    }

    private static func watermark(_ db: Database) throws -> Revision? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT rev_epoch, rev_seq FROM remove_all_watermark WHERE id = 1")).map {
            Revision(epoch: $0["rev_epoch"], sequence: UInt64(bitPattern: $0["rev_seq"] as Int64))
        }
    }

    private static func fetch(_ db: Database, source: String, id: String) throws -> StoredNotification? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM notification WHERE source_id = ? AND notification_id = ?"), arguments: [source, id]).map(record)
    }

    private static func encodeDecision(_ decision: AlertDecision) throws -> String {
        String(decoding: try JSONEncoder().encode(decision), as: UTF8.self)
    }

    private static func record(_ row: Row) throws -> StoredNotification {
        let payload: Data = row["payload"]
        let alerting: Data? = row["alerting"]
        let decision: String? = row["alert_decision"]
        return StoredNotification(
            notification: try WireNotification(serializedBytes: payload),
            alerting: try alerting.map { try WireAlertingContext(serializedBytes: $0) },
            alerted: row["alerted"],
            removed: row["removed"],
            revision: Revision(epoch: row["rev_epoch"], sequence: UInt64(bitPattern: row["rev_seq"] as Int64)),
            receivedAt: row["received_at"],
            updatedAt: row["updated_at"],
            alertDecision: try decision.map { try JSONDecoder().decode(AlertDecision.self, from: Data($0.utf8)) }
        )
    }

    /// Marks a notification removed because the person dismissed or cleared it on the accessory.
    /// Its revision stays, so a later update from the phone still cannot bring it back.
    @discardableResult
    public func removeLocally(source: String, id: String, now: Date) throws -> Bool {
        try database.write { db in
            try db.execute(
                sql: "UPDATE notification SET removed = 1, updated_at = ? WHERE source_id = ? AND notification_id = ? AND NOT removed",
                arguments: [now, source, id]
            )
            return db.changesCount > 0
        }
    }

    /// Stored notifications, newest first; removed ones (and tombstones) only if asked for.
    public func notifications(includeRemoved: Bool = false) throws -> [StoredNotification] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notification \(includeRemoved ? "" : "WHERE NOT removed") ORDER BY received_at DESC, rowid DESC").map(Self.record)
        }
    }

    public func notification(source: String, id: String) throws -> StoredNotification? {
        try database.read { db in try Self.fetch(db, source: source, id: id) }
    }
}

extension Database {
    /// Runs a statement compiled once per connection: GRDB caches it by its SQL, so the hot
    /// path skips parsing and authorizing the same statements for every event.
    func execute(cached sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
