import GRDB

extension AccessoryStore {
    /// A store with the same schema and rules that lives in memory while it is referenced: for
    /// tests and fuzzers, which need many fresh stores quickly. Nothing in it is durable.
    public static func inMemory(retention: Retention = .default) throws -> AccessoryStore {
        try AccessoryStore(memory: try DatabaseQueue(), retention: retention)
    }

    /// Empties the store back to its freshly migrated state, epochs included, so a fuzzer can
    /// reuse one in-memory store for every input: opening and migrating one costs more than
    /// most inputs. SPI because no accessory should ever wipe its ledger this way.
    @_spi(Fuzzing) public func eraseEverything() throws {
        try write { db in
            try db.execute(cached: "DELETE FROM notification")
            try db.execute(cached: "DELETE FROM remove_all_watermark")
            try db.execute(cached: "DELETE FROM key_exchange")
            try db.execute(cached: "DELETE FROM sqlite_sequence WHERE name = 'key_exchange'")
        }
    }

    /// The running totals retention reads (kept by triggers) beside the same figures counted
    /// afresh. They must always agree: tests and the ledger fuzzer check it.
    @_spi(Fuzzing) public func retentionTotals() throws -> (kept: [Int], counted: [Int]) {
        try read { db in
            let kept = try retention.totals(db)
            let counted = try Row.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) AS count, COALESCE(SUM(LENGTH(payload)), 0) AS bytes FROM notification"))
            return ([kept.count, kept.bytes], [counted?["count"] ?? 0, counted?["bytes"] ?? 0])
        }
    }
}
