import Foundation
import GRDB

/// Damages a SQLite store in WAL mode under the connections that hold it open, so that their
/// next statement that reads a table fails with `SQLITE_CORRUPT`, every time. Writing over the
/// file alone did not do that reliably: a connection went on reading the pages it had cached.
public enum StoreDamage {
    /// Overwrites every page but the first (the file header and the schema's root) with a fill
    /// byte, then commits a change to page 1 through the WAL, which tells every other connection
    /// that its cached pages are stale.
    public static func corruptTables(ofStoreAt path: String) throws {
        let other = try DatabaseQueue(path: path)
        defer { try? other.close() }
        // Every page into the database file, so that none is read from the WAL afterwards; and
        // the schema loaded now, while its pages are whole.
        let pageSize = try other.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema")
            return try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        }
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? file.close() }
        let size = try file.seekToEnd()
        guard size > UInt64(pageSize) else { throw Unexpected(description: "\(path) has one page; nothing to damage") }
        try file.seek(toOffset: UInt64(pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - pageSize))
        try file.synchronize()
        try other.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA user_version = 7") }
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }
}
