import Foundation
import GRDB
import Synchronization
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeFiles
import NotifBridgeWire

/// The accessory's durable state in one SQLite file (WAL): key exchanges and notifications.
///
/// Every event is applied in one write transaction, so what a receipt acknowledges is on disk
/// before the receipt leaves; a crash or a power cut loses nothing acknowledged. Events that
/// arrive together share one transaction (``applyBatch(_:now:conditions:burst:)``), so one fsync.
public final class AccessoryStore: Sendable {
    /// A pool (WAL) on disk; a queue for `inMemory` (AccessoryStore+Memory.swift).
    let database: any DatabaseWriter
    public let path: String
    public let retention: Retention
    /// Told of each failure ``isBroken(_:)`` says will not pass, whichever operation met it.
    private let whenBroken: (@Sendable (any Error) -> Void)?

    /// Opens (creating and migrating if needed) the store at `path`, mode 0600.
    /// - Parameter whenBroken: called with each failure that ``isBroken(_:)``, from any read or
    ///   write (a key exchange, the relay's ratchet, ANCS, a listing), not only the commits of
    ///   notifications: the daemon stops on the first.
    public init(path: String, retention: Retention = .default, whenBroken: (@Sendable (any Error) -> Void)? = nil) throws {
        self.path = path
        self.retention = retention
        self.whenBroken = whenBroken
        try DurableFile.createPrivate(path)
        try Self.checkOwnership(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try Self.syncEveryCommit(db) }
        database = try DatabasePool(path: path, configuration: configuration)
        // The pool switches its writer to WAL with synchronous = NORMAL after preparing it,
        // so the writer is set again once the pool is open.
        try database.writeWithoutTransaction { db in
            try Self.syncEveryCommit(db)
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        }
        try Self.migrator.migrate(database)
    }

    /// Whether `error` from a store operation says the store cannot be trusted any more (an
    /// I/O error, as on a file system remounted read-only; damaged pages), rather than that this
    /// commit failed (a full disk, which passes once there is room, is not such an error).
    public static func isBroken(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_IOERR, .SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode)
    }

    /// What the WAL is cut back to after a checkpoint. Without it the WAL keeps the size of the
    /// largest transaction it ever held (75 MB after one large prune) until the accessory stops.
    static let walSizeLimit = 4 << 20

    /// A store SQLite finds damaged, refused before anything is written to it.
    public struct Damaged: Error, CustomStringConvertible {
        public var path: String
        public var problems: [String]
        public var description: String {
            "it is damaged (SQLite's quick_check: \(problems.joined(separator: "; "))). Nothing was changed. Move it aside to start"
                + " with an empty store (its notifications and key exchanges are then gone, and the iPhone exchanges keys again),"
                + " or save what can be read with `sqlite3 \(path) .recover | sqlite3 recovered.sqlite`"
        }
    }

    /// Checks the pages and indexes at start (`PRAGMA quick_check`, O(size)): a damaged store
    /// was taken, acknowledged notifications until a commit touched the damage, then failed
    /// every one while the daemon ran on.
    private static func checkIntegrity(_ database: some DatabaseReader, path: String) throws {
        let problems: [String]
        do {
            // A small page cache: the check reads every page once, and the default 2 MB, freed on
            // another thread's heap, would stay in the accessory's memory for good.
            problems = try database.read { db in
                try db.execute(sql: "PRAGMA cache_size = -64")
                return try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
            }
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            // Damage where the check itself reads stops it: SQLite's message is then the finding.
            throw Damaged(path: path, problems: [error.message ?? "\(error.resultCode)"])
        }
        guard problems == ["ok"] else { throw Damaged(path: path, problems: problems) }
    }

    /// A database this store cannot safely take over: another program's, or one a newer
    /// NotifBridge has migrated past what this one knows.
    public struct NotOurs: Error, CustomStringConvertible {
        public var description: String
    }

    /// Refuses a database with tables but no migration record (another program's), with
    /// migrations this version does not know (a downgrade), or with damaged pages. Read-only,
    /// before the pool opens: opening it switches the file to WAL and writes, and a refused
    /// store is left exactly as it was.
    private static func checkOwnership(_ path: String) throws {
        guard let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 else { return }
        var readOnly = Configuration()
        readOnly.readonly = true
        let probe = try DatabaseQueue(path: path, configuration: readOnly)
        defer { try? probe.close() }
        try probe.read(checkOwnership)
        try checkIntegrity(probe, path: path)
    }

    private static func checkOwnership(_ db: Database) throws {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        guard !tables.isEmpty else { return }
        guard tables.contains("grdb_migrations") else {
            let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            throw NotOurs(description: "it is another program's SQLite database (tables \(shown)), not a NotifBridge store; move it away")
        }
        if try migrator.hasBeenSuperseded(db) {
            let known = Set(migrator.migrations)
            let unknown = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").filter { !known.contains($0) }
            throw NotOurs(description: "a newer NotifBridge has changed it (migrations \(unknown.joined(separator: ", ")), which this version does not know); run that version, or a store of this version's own")
        }
    }

    init(memory: DatabaseQueue, retention: Retention) throws {
        path = ":memory:"
        self.retention = retention
        whenBroken = nil
        database = memory
        try Self.migrator.migrate(database)
    }

    /// Runs the store's reads. A pool reads on a reader connection of its own, in a transaction.
    /// The in-memory queue has one connection, and GRDB's read-only mode there (`PRAGMA
    /// query_only` on, then off) makes SQLite compile every cached statement again at its next
    /// use: 42% of the ledger fuzzer's time. The queue runs one access at a time, so no write can
    /// come between the statements of a read without that mode.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            guard let queue = database as? DatabaseQueue else { return try database.read(body) }
            return try queue.inDatabase(body)
        } catch {
            noticeBroken(error)
            throw error
        }
    }

    /// Runs one of the store's write transactions.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.write(body)
        } catch {
            noticeBroken(error)
            throw error
        }
    }

    private func noticeBroken(_ error: any Error) {
        if let whenBroken, Self.isBroken(error) { whenBroken(error) }
    }

    /// Closes the database (after a graceful shutdown): a later call on this store throws.
    /// Everything in the WAL is first copied into the database file and the WAL emptied, so that
    /// a stopped accessory's store is whole in `accessory.sqlite` alone (a copy of that file is a
    /// backup). GRDB closes the pool's writer before its readers, and SQLite leaves the WAL in
    /// place when the last connection to close is a reader, so closing alone did not do this.
    public func close() throws {
        var incomplete: String?
        if database is DatabasePool {
            do {
                let (walFrames, copied) = try database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
                if copied < walFrames { incomplete = "\(copied) of \(walFrames) pages copied" }
            } catch {
                incomplete = "\(error)"
            }
        }
        try database.close()
        if let incomplete { throw CheckpointIncomplete(path: path, reason: incomplete) }
    }

    /// The WAL could not be copied into the store file at close (a full disk, most often).
    /// Nothing is lost: the WAL holds it, and the next start reads it.
    public struct CheckpointIncomplete: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String {
            "the store's WAL could not be copied into \(path) at the stop (\(reason)): the notifications it holds are safe in \(path)-wal,"
                + " which must stay beside the store (a backup needs both files); the next start copies it"
        }
    }

    /// FULL: in WAL mode a commit returns only after the WAL is fsynced. NORMAL (GRDB's WAL
    /// default) defers that to checkpoints, and a power cut can lose acknowledged commits.
    private static func syncEveryCommit(_ db: Database) throws {
        try db.execute(sql: "PRAGMA synchronous = FULL")
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
        // The decision is the one stored answer to "did it alert?"; the flag beside it could
        // only repeat it (no query filters on it).
        migrator.registerMigration("v3: the decision alone says whether it alerted") { db in
            try db.execute(
                sql: "UPDATE notification SET alert_decision = ? WHERE alerted AND alert_decision IS NULL",
                arguments: [try encodeDecision(.recordedBeforeDecisions)]
            )
            try db.execute(sql: "ALTER TABLE notification DROP COLUMN alerted")
        }
        // Retention ran an aggregate over the whole table (and a sort, once over a limit) on
        // every commit. Totals kept by triggers and an index in age order make it O(log n).
        migrator.registerMigration("v4: running totals and an age index for retention") { db in
            try db.create(index: "notification_by_age", on: "notification", columns: ["received_at"])
            try db.execute(sql: """
                CREATE TABLE notification_totals (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    count INTEGER NOT NULL,
                    bytes INTEGER NOT NULL
                );
                INSERT INTO notification_totals SELECT 1, COUNT(*), COALESCE(SUM(LENGTH(payload)), 0) FROM notification;
                CREATE TRIGGER notification_totals_insert AFTER INSERT ON notification BEGIN
                    UPDATE notification_totals SET count = count + 1, bytes = bytes + LENGTH(NEW.payload) WHERE id = 1;
                END;
                CREATE TRIGGER notification_totals_delete AFTER DELETE ON notification BEGIN
                    UPDATE notification_totals SET count = count - 1, bytes = bytes - LENGTH(OLD.payload) WHERE id = 1;
                END;
                CREATE TRIGGER notification_totals_update AFTER UPDATE OF payload ON notification BEGIN
                    UPDATE notification_totals SET bytes = bytes - LENGTH(OLD.payload) + LENGTH(NEW.payload) WHERE id = 1;
                END;
                """)
        }
        migrator.registerMigration("v5: internet ratchets") { db in
            try createRatchetTables(db)
        }
        // Listing walks the age index and skips removed records; the index on (removed, age)
        // cost every insert, removal and pruned record one more B-tree write.
        migrator.registerMigration("v6: one index in age order") { db in
            try db.drop(index: "notification_by_time")
        }
        // The transport session a reply over the internet names (its push's sessionIdentifier).
        migrator.registerMigration("v7: the feature an exchange carried") { db in
            try db.execute(sql: "ALTER TABLE key_exchange ADD COLUMN feature_id TEXT")
        }
        return migrator
    }

    // MARK: Key exchanges

    /// The key IDs of the active exchanges of `suite` made with a key other than `keyID`: at
    /// start, an exchange whose key file is gone (deleted, or a backup restored without it).
    public func activeExchangeKeys(suite: String, other keyID: [UInt8]) throws -> [[UInt8]] {
        try read { db in
            try Data.fetchAll(
                db, sql: "SELECT DISTINCT key_id FROM key_exchange WHERE active AND cipher_suite = ? AND key_id != ?", arguments: [suite, Data(keyID)]
            ).map { Array($0) }
        }
    }

    /// The exchange made with the key `keyID`, if the accessory still holds one.
    public func activeExchange(keyID: [UInt8]) throws -> KeyExchangeParameters? {
        try read { db in
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

    /// Records a completed exchange as the only active one and returns its epoch. With
    /// `internet`, its internet ratchets start in the same transaction: a crash leaves either
    /// both or neither, never an exchange that the relay's messages cannot open.
    @discardableResult
    public func saveExchange(_ parameters: KeyExchangeParameters, keyID: [UInt8], now: Date, internet: InternetRatchetStart? = nil) throws -> Int64 {
        if let internet { try Self.checkInternetKeyID(internet.keyID) }
        return try write { db in
            try db.execute(cached: "UPDATE key_exchange SET active = 0")
            let id = Int64(bitPattern: parameters.exchangeID)
            let epoch: Int64
            if let known = try Int64.fetchOne(db.cachedStatement(sql: "SELECT epoch FROM key_exchange WHERE exchange_id = ?"), arguments: [id]) {
                try db.execute(cached: "UPDATE key_exchange SET active = 1 WHERE epoch = ?", arguments: [known])
                epoch = known
            } else {
                try db.execute(
                    cached: """
                        INSERT INTO key_exchange (exchange_id, key_id, cipher_suite, version, identifier, encapsulated_key, active, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, 1, ?)
                        """,
                    arguments: [id, Data(keyID), parameters.cipherSuite, parameters.version, parameters.identifier, parameters.encapsulatedKey, now]
                )
                epoch = db.lastInsertedRowID
            }
            if let internet {
                try Self.startRatchets(db, exchangeID: parameters.exchangeID, internet)
            }
            return epoch
        }
    }

    /// Deactivates an exchange; its row stays so epochs keep their order.
    public func forgetExchange(_ exchangeID: UInt64) throws {
        try write { db in
            try db.execute(sql: "UPDATE key_exchange SET active = 0 WHERE exchange_id = ?", arguments: [Int64(bitPattern: exchangeID)])
        }
    }

    // MARK: Notifications

    static func fetch(_ db: Database, source: String, id: String) throws -> StoredNotification? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM notification WHERE source_id = ? AND notification_id = ?"), arguments: [source, id]).map(record)
    }

    /// Decisions repeat (a handful of presentations, sounds and reasons), and JSON encoding was a
    /// tenth of a notification's store time: each distinct one is encoded once. Bounded: the
    /// cache starts over past `decisionCacheLimit` entries.
    private static let decisionCache = Mutex<[AlertDecision: String]>([:])
    private static let decisionCacheLimit = 64

    static func encodeDecision(_ decision: AlertDecision) throws -> String {
        if let cached = decisionCache.withLock({ $0[decision] }) { return cached }
        let encoded = String(decoding: try JSONEncoder().encode(decision), as: UTF8.self)
        decisionCache.withLock { cache in
            if cache.count >= decisionCacheLimit { cache.removeAll() }
            cache[decision] = encoded
        }
        return encoded
    }

    static func record(_ row: Row) throws -> StoredNotification {
        let payload: Data = row["payload"]
        let alerting: Data? = row["alerting"]
        let decision: String? = row["alert_decision"]
        return StoredNotification(
            notification: try WireNotification(serializedBytes: payload),
            alerting: try alerting.map { try WireAlertingContext(serializedBytes: $0) },
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
        try write { db in
            try db.execute(
                sql: "UPDATE notification SET removed = 1, updated_at = ? WHERE source_id = ? AND notification_id = ? AND NOT removed",
                arguments: [now, source, id]
            )
            return db.changesCount > 0
        }
    }

    /// `PRAGMA synchronous` on the writer connection and on a reader (2 is FULL), for tests.
    func synchronousModes() throws -> (writer: Int, reader: Int) {
        let writer = try database.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") ?? -1 }
        let reader = try database.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") ?? -1 }
        return (writer, reader)
    }
}

extension Database {
    /// Runs a statement compiled once per connection: GRDB caches it by its SQL, so the hot
    /// path skips parsing and authorizing the same statements for every event.
    func execute(cached sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension AlertDecision {
    /// For rows stored before v2, which kept only whether they alerted, not how or why.
    static let recordedBeforeDecisions = AlertDecision(
        presentation: .alert, sound: .none, haptic: .none, persistent: false, reason: "alerted (stored before alert decisions were recorded)"
    )
}
