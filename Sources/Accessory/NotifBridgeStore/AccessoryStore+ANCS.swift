import Foundation
import GRDB
import NotifBridgeAccessoryCore

/// What notifications from ANCS need of the store beyond events: an epoch for each connection,
/// and withdrawing what the iPhone no longer has.
extension AccessoryStore {
    /// `key_exchange.cipher_suite` of the rows that number ANCS connections. They are never
    /// active, so a key exchange is never resumed from one.
    public static let ancsEpochKind = "ANCS"

    /// Records an ANCS connection from `device` as a new epoch above every earlier one, so its
    /// events (numbered from 1 under `exchangeID`) order after anything stored before. Earlier
    /// ANCS epochs that no stored notification uses any longer are deleted; AUTOINCREMENT keeps
    /// epochs from being reused.
    @discardableResult
    public func beginANCSConnection(device: String, exchangeID: UInt64, now: Date) throws -> Int64 {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO key_exchange (exchange_id, key_id, cipher_suite, version, identifier, encapsulated_key, active, created_at)
                    VALUES (?, x'', ?, '1', ?, x'', 0, ?)
                    """,
                arguments: [Int64(bitPattern: exchangeID), Self.ancsEpochKind, device, now]
            )
            let epoch = db.lastInsertedRowID
            try db.execute(
                sql: """
                    DELETE FROM key_exchange WHERE cipher_suite = ? AND epoch < ?
                    AND epoch NOT IN (SELECT DISTINCT rev_epoch FROM notification)
                    """,
                arguments: [Self.ancsEpochKind, epoch]
            )
            return epoch
        }
    }

    /// Marks removed every live notification whose identifier starts with `prefix` and is not
    /// in `keeping`, and returns them as they are now (removed), for the presenter.
    public func withdraw(identifierPrefix prefix: String, keeping: Set<String>, now: Date) throws -> [StoredNotification] {
        try write { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT * FROM notification WHERE NOT removed AND substr(notification_id, 1, ?) = ?",
                arguments: [prefix.utf8.count, prefix]
            )
            var withdrawn: [StoredNotification] = []
            for row in rows {
                let id: String = row["notification_id"]
                guard !keeping.contains(id) else { continue }
                let source: String = row["source_id"]
                try db.execute(
                    cached: "UPDATE notification SET removed = 1, updated_at = ? WHERE source_id = ? AND notification_id = ?",
                    arguments: [now, source, id]
                )
                var record = try Self.record(row)
                record.removed = true
                withdrawn.append(record)
            }
            return withdrawn
        }
    }
}
