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

    /// Records one commit prunes at most. Pruning a large excess at once (retention lowered on a
    /// full store: 60,000 records) wrote all of it to the WAL in the transaction of the next
    /// notification; on a nearly full disk that failed, and so did every notification after it.
    /// The rest of an excess goes in the commits that follow, this many at a time.
    public static let maxPrunedPerCommit = 256

    /// Deletes what is over the limits, oldest first and at most `maxPrunedPerCommit` records,
    /// inside the caller's transaction, and returns the rowids that went. Every commit runs it:
    /// the totals come from the row that triggers keep (migration v4) and the oldest record from
    /// the age index, so a check costs two index lookups and pruning k records costs
    /// O(k log n), however many are stored.
    @discardableResult
    func enforce(_ db: Database, now: Date, limit: Int = maxPrunedPerCommit) throws -> Set<Int64> {
        let cutoff = now.addingTimeInterval(-maxAgeDays * 86_400).databaseValue
        let (count, bytes) = try totals(db)
        // Stored times are text that sorts as time does, so the age index answers this alone.
        let expired = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM notification WHERE received_at < ?)"), arguments: [cutoff]) ?? false
        guard count > maxCount || bytes > maxBytes || expired else { return [] }
        let doomed = try oldestOverLimits(db, count: count, bytes: bytes, cutoff: cutoff, limit: limit)
        for rowid in doomed {
            try db.execute(cached: "DELETE FROM notification WHERE rowid = ?", arguments: [rowid])
        }
        return Set(doomed)
    }

    /// The oldest records (by age, then by insertion for records of one batch), at most `limit`,
    /// that are expired or whose deletion brings the count and the bytes within the limits. The
    /// age index gives them oldest first, so the expired come first. The cursor ends before
    /// anything is deleted.
    private func oldestOverLimits(_ db: Database, count: Int, bytes: Int, cutoff: DatabaseValue, limit: Int) throws -> [Int64] {
        var (count, bytes) = (count, bytes)
        let oldestFirst = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT rowid, LENGTH(payload) AS size, received_at < ? AS expired FROM notification ORDER BY received_at ASC, rowid ASC"),
            arguments: [cutoff]
        )
        var doomed: [Int64] = []
        while doomed.count < limit, let row = try oldestFirst.next() {
            guard count > maxCount || bytes > maxBytes || row["expired"] as Bool else { break }
            doomed.append(row["rowid"])
            count -= 1
            bytes -= row["size"] as Int
        }
        return doomed
    }

    /// How many records are stored and their serialised bytes, as the triggers keep them.
    func totals(_ db: Database) throws -> (count: Int, bytes: Int) {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT count, bytes FROM notification_totals WHERE id = 1")) else {
            return (0, 0)
        }
        return (row["count"], row["bytes"])
    }
}
