import Foundation
import GRDB
import NotifBridgeFiles
import NotifBridgeRelayCore

/// The relay's queues on SQLite (docs/PROTOCOL.md §11): registered accessories with their token
/// digests, and the messages waiting for each, numbered, with their expiry. One file, nothing to
/// set up; every commit is fsynced (`synchronous = FULL`), so a post the relay accepted survives a
/// crash or a power cut. The decisions (limits, what to send) are NotifBridgeRelayCore's.
public final class RelayStore: RelayStorage {
    public typealias Role = RelayRole

    let database: DatabasePool
    public let limits: RelayLimits

    public init(path: String, limits: RelayLimits = RelayLimits()) throws {
        self.limits = limits
        try DurableFile.createPrivate(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        database = try DatabasePool(path: path, configuration: configuration)
        // The pool sets its writer to synchronous = NORMAL after preparing it (as in AccessoryStore).
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try Self.migrator.migrate(database)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE accessory (
                    id TEXT PRIMARY KEY NOT NULL,
                    inbox_digest BLOB NOT NULL,
                    post_digest BLOB NOT NULL,
                    next_seq INTEGER NOT NULL,
                    queued_messages INTEGER NOT NULL,
                    queued_bytes INTEGER NOT NULL
                );
                CREATE TABLE message (
                    accessory_id TEXT NOT NULL REFERENCES accessory(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    body BLOB NOT NULL,
                    expires_at REAL NOT NULL,
                    PRIMARY KEY (accessory_id, seq)
                ) WITHOUT ROWID;
                CREATE INDEX message_by_expiry ON message(expires_at);
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE accessory ADD COLUMN push_token TEXT")
            try db.execute(sql: "ALTER TABLE accessory ADD COLUMN push_bundle TEXT")
        }
        return migrator
    }

    /// ``RelayAccessoryID/validate(_:)``, which the store applies to every ID it is given.
    public static func validate(accessoryID id: String) throws(RelayError) {
        try RelayAccessoryID.validate(id)
    }

    /// Registers an accessory with the digests of its two tokens; registering it again replaces
    /// them (a new pairing) and keeps what waits for it.
    public func register(accessory id: String, inbox: RelayToken, post: RelayToken) throws {
        try Self.validate(accessoryID: id)
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO accessory (id, inbox_digest, post_digest, next_seq, queued_messages, queued_bytes) VALUES (?, ?, ?, 1, 0, 0)
                    ON CONFLICT(id) DO UPDATE SET inbox_digest = excluded.inbox_digest, post_digest = excluded.post_digest
                    """,
                arguments: [id, Data(inbox.digest), Data(post.digest)]
            )
        }
    }

    /// Whether `token` is the accessory's token for `role`. An unknown accessory is not
    /// authorized either, in the same way, so a caller learns nothing about which exist.
    public func authorizes(_ token: String, accessory id: String, as role: Role) throws -> Bool {
        guard (try? Self.validate(accessoryID: id)) != nil else { return false }
        let column = role == .inbox ? "inbox_digest" : "post_digest"
        let stored = try database.read { db in try Data.fetchOne(db, sql: "SELECT \(column) FROM accessory WHERE id = ?", arguments: [id]) }
        return RelayToken.matches(token, stored: Array(stored ?? Data(count: 32)))
    }

    public func inboxDigests(of ids: [String]) throws -> [String: [UInt8]] {
        guard ids.count <= maxDigestLookup else { throw RelayError(.tooLarge, "at most \(maxDigestLookup) accessory IDs a lookup, not \(ids.count)") }
        guard !ids.isEmpty else { return [:] }
        let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        return try database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, inbox_digest FROM accessory WHERE id IN (\(placeholders))", arguments: StatementArguments(ids))
            return Dictionary(uniqueKeysWithValues: rows.map { row -> (String, [UInt8]) in (row["id"], Array(row["inbox_digest"] as Data)) })
        }
    }

    /// Queues a message for an accessory and returns its number; refuses it, keeping everything
    /// that waits, when a limit says so (`RelayAdmission`).
    public func post(_ message: [UInt8], to id: String, now: Date) throws -> UInt64 {
        try postBatch([(message, id)], now: now)[0].get()
    }

    /// Queues several posts in one transaction, so one fsync for all of them (group commit);
    /// each is admitted or refused on its own, against the queue as the posts before it in the
    /// batch left it. A failure of the database itself fails the whole batch (thrown).
    public func postBatch(_ posts: [(message: [UInt8], accessoryID: String)], now: Date) throws -> [Result<UInt64, any Error>] {
        try database.write { db in
            try posts.map { post in
                guard let row = try Row.fetchOne(db, sql: "SELECT next_seq, queued_messages, queued_bytes FROM accessory WHERE id = ?", arguments: [post.accessoryID]) else {
                    return .failure(UnknownRelayAccessory(id: post.accessoryID))
                }
                let seq: Int64 = row["next_seq"]
                let expires: Date
                do {
                    expires = try RelayAdmission.admit(
                        length: post.message.count, to: .init(messages: row["queued_messages"], bytes: row["queued_bytes"]), now: now, limits: limits)
                } catch {
                    return .failure(error)
                }
                try db.execute(
                    sql: "INSERT INTO message (accessory_id, seq, body, expires_at) VALUES (?, ?, ?, ?)",
                    arguments: [post.accessoryID, seq, Data(post.message), expires.timeIntervalSince1970]
                )
                try db.execute(
                    sql: "UPDATE accessory SET next_seq = next_seq + 1, queued_messages = queued_messages + 1, queued_bytes = queued_bytes + ? WHERE id = ?",
                    arguments: [post.message.count, post.accessoryID]
                )
                return .success(UInt64(seq))
            }
        }
    }

    /// Up to `limit` unexpired messages numbered above `after`, ascending: `InboxSession`'s fetch.
    public func fetch(for id: String, after: UInt64, limit: Int, now: Date) throws -> [(seq: UInt64, message: [UInt8])] {
        try database.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT seq, body FROM message WHERE accessory_id = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?",
                arguments: [id, Int64(clamping: after), now.timeIntervalSince1970, limit]
            ).map { row in
                let body: Data = row["body"]
                let seq: Int64 = row["seq"]
                return (UInt64(seq), Array(body))
            }
        }
    }

    /// Deletes what the accessory acknowledged: its messages numbered up to `upTo`.
    public func forget(for id: String, upTo: UInt64) throws {
        try database.write { db in
            _ = try Self.delete(db, "accessory_id = ? AND seq <= ?", [id, Int64(clamping: upTo)])
        }
    }

    /// Deletes every expired message and returns how many; the relay runs it now and then.
    @discardableResult
    public func sweep(now: Date) throws -> Int {
        try database.write { db in try Self.delete(db, "expires_at <= ?", [now.timeIntervalSince1970]) }
    }

    public func setPushTarget(_ target: PushTarget, accessory id: String) throws {
        try database.write { db in
            try db.execute(sql: "UPDATE accessory SET push_token = ?, push_bundle = ? WHERE id = ?", arguments: [target.token, target.bundleID, id])
            guard db.changesCount == 1 else { throw UnknownRelayAccessory(id: id) }
        }
    }

    public func pushTarget(of id: String) throws -> PushTarget? {
        let row = try database.read { db in
            try Row.fetchOne(db, sql: "SELECT push_token, push_bundle FROM accessory WHERE id = ?", arguments: [id])
        }
        guard let row, let token: String = row["push_token"], let bundle: String = row["push_bundle"] else { return nil }
        return try PushTarget(token: token, bundleID: bundle)
    }

    /// What waits for an accessory, as the queue totals say.
    public func queue(of id: String) throws -> RelayAdmission.Queue? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT queued_messages, queued_bytes FROM accessory WHERE id = ?", arguments: [id])
                .map { RelayAdmission.Queue(messages: $0["queued_messages"], bytes: $0["queued_bytes"]) }
        }
    }

    /// `PRAGMA synchronous` on the writer (2 is FULL), for the test that a post is fsynced.
    @_spi(Testing) public func writerSynchronousMode() throws -> Int {
        try database.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") ?? -1 }
    }

    public func close() throws {
        try database.close()
    }

    /// One machine, one instance: no other instance posts or opens inboxes.
    public func elsewhere() -> AsyncStream<RelayElsewhere> {
        AsyncStream { $0.finish() }
    }

    public func announceInbox(of id: String) {}

    /// Deletes messages and takes them off their accessories' totals, in the caller's transaction.
    private static func delete(_ db: Database, _ condition: String, _ arguments: StatementArguments) throws -> Int {
        let deleted = try Row.fetchAll(db, sql: "DELETE FROM message WHERE \(condition) RETURNING accessory_id, length(body) AS size", arguments: arguments)
        var totals: [String: (messages: Int, bytes: Int)] = [:]
        for row in deleted {
            let id: String = row["accessory_id"]
            let size: Int = row["size"]
            totals[id, default: (0, 0)].messages += 1
            totals[id, default: (0, 0)].bytes += size
        }
        for (id, total) in totals {
            try db.execute(
                sql: "UPDATE accessory SET queued_messages = queued_messages - ?, queued_bytes = queued_bytes - ? WHERE id = ?",
                arguments: [total.messages, total.bytes, id]
            )
        }
        return deleted.count
    }
}
