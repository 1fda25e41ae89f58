import Foundation
import GRDB

/// How much the accessory keeps: the oldest notifications go first once any limit is passed.
/// Removed notifications (kept as tombstones so late messages cannot resurrect them) count too.
public struct Retention: Codable, Sendable, Hashable {
    public var maxCount: Int
    /// Serialised notification bytes, icons and attachments included.
    public var maxBytes: Int
    public var maxAgeDays: Double

    public init(maxCount: Int = 2000, maxBytes: Int = 64 * 1024 * 1024, maxAgeDays: Double = 7) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
        self.maxAgeDays = maxAgeDays
    }

    public static let `default` = Retention()

    /// Keys left out of the policy file keep their defaults.
    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        maxCount = try container.decodeIfPresent(Int.self, forKey: .maxCount) ?? Self.default.maxCount
        maxBytes = try container.decodeIfPresent(Int.self, forKey: .maxBytes) ?? Self.default.maxBytes
        maxAgeDays = try container.decodeIfPresent(Double.self, forKey: .maxAgeDays) ?? Self.default.maxAgeDays
    }

    /// Deletes what is over the limits, oldest first, inside the caller's transaction, and
    /// says whether anything went. Every commit runs it, so the common case (within every
    /// limit) costs one aggregate pass and no sort.
    @discardableResult
    func enforce(_ db: Database, now: Date) throws -> Bool {
        let cutoff = now.addingTimeInterval(-maxAgeDays * 86_400)
        if let totals = try Row.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) AS count, COALESCE(SUM(LENGTH(payload)), 0) AS bytes, MIN(received_at) AS oldest FROM notification")) {
            let (count, bytes, oldest): (Int, Int, Date?) = (totals["count"], totals["bytes"], totals["oldest"])
            if count <= maxCount, bytes <= maxBytes, oldest.map({ $0 >= cutoff }) ?? true {
                return false
            }
        }
        try db.execute(sql: "DELETE FROM notification WHERE received_at < ?", arguments: [cutoff])
        try db.execute(
            sql: "DELETE FROM notification WHERE rowid IN (SELECT rowid FROM notification ORDER BY received_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
            arguments: [maxCount]
        )
        guard let total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM notification"), total > maxBytes else { return true }
        // Walk from the oldest, deleting until the rest fits.
        var excess = total - maxBytes
        let oldest = try Row.fetchCursor(db, sql: "SELECT rowid, LENGTH(payload) AS size FROM notification ORDER BY received_at ASC, rowid ASC")
        var doomed: [Int64] = []
        while excess > 0, let row = try oldest.next() {
            doomed.append(row["rowid"])
            excess -= row["size"] as Int
        }
        try db.execute(sql: "DELETE FROM notification WHERE rowid IN (\(doomed.map(String.init).joined(separator: ",")))")
        return true
    }
}
