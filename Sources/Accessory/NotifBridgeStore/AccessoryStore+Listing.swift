import GRDB
import NotifBridgeAccessoryCore

/// Reading notifications back: one, all (tests, small stores), or a page at a time (listings).
extension AccessoryStore {
    /// Stored notifications, newest first; removed ones (and tombstones) only if asked for.
    /// All at once: for tests and small stores; listings page with ``notificationPage(after:limit:includeRemoved:)``.
    public func notifications(includeRemoved: Bool = false) throws -> [StoredNotification] {
        try read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM notification \(includeRemoved ? "" : "WHERE NOT removed") ORDER BY received_at DESC, rowid DESC")).map(Self.record)
        }
    }

    /// Up to `limit` notifications in the order of ``notifications(includeRemoved:)``, starting
    /// after `cursor` (from the start when nil). Keyset pagination: each page is one short
    /// read, and a row is never listed twice or skipped because others arrived in between.
    public func notificationPage(after cursor: NotificationCursor?, limit: Int, includeRemoved: Bool) throws -> NotificationPage {
        precondition(limit > 0, "a page holds at least one notification")
        var conditions: [String] = includeRemoved ? [] : ["NOT removed"]
        var arguments: StatementArguments = []
        if let cursor {
            conditions.append("(received_at, rowid) < (?, ?)")
            arguments += [cursor.receivedAt, cursor.rowID]
        }
        arguments += [limit]
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try read { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT rowid AS page_rowid, * FROM notification \(filter) ORDER BY received_at DESC, rowid DESC LIMIT ?"),
                arguments: arguments
            )
            let next = rows.count == limit ? rows.last.map { NotificationCursor(receivedAt: $0["received_at"], rowID: $0["page_rowid"]) } : nil
            var page = NotificationPage(records: [], next: next)
            // One damaged row (a bad sector, a hand edit) must not hide every other notification.
            for row in rows {
                do {
                    page.records.append(try Self.record(row))
                } catch {
                    page.damaged.append(.init(source: row["source_id"], id: row["notification_id"], reason: "\(error)"))
                }
            }
            return page
        }
    }

    public func notification(source: String, id: String) throws -> StoredNotification? {
        try read { db in try Self.fetch(db, source: source, id: id) }
    }
}

/// Where a page of notifications ended: the sort key of its last row, in the store's own terms
/// (received_at as stored, then rowid for rows committed in the same batch).
public struct NotificationCursor: Sendable, Hashable {
    let receivedAt: String
    let rowID: Int64
}

public struct NotificationPage: Sendable {
    public var records: [StoredNotification]
    /// Rows of this page that could not be read back, left out of `records`.
    public var damaged: [DamagedRecord] = []
    /// Where the next page starts; nil when this page was the last.
    public var next: NotificationCursor?
}

/// A stored row whose contents no longer decode: which notification, and why.
public struct DamagedRecord: Sendable, Hashable {
    public var source: String
    public var id: String
    public var reason: String
}
