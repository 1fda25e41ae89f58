import Foundation
import GRDB
import GRDBSQLite
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
@_spi(Fuzzing) @testable import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// The store's statements are compiled once per connection and kept. Something that expires
/// them all (a flag PRAGMA such as GRDB's read-only mode on a single connection) makes SQLite
/// compile each again at its next use: for the ledger fuzzer, whose in-memory store reads after
/// every batch, that was 42% of its time.
@Suite("Store statements")
struct StoreStatementTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 5, count: 1120))
    let start = Date(timeIntervalSince1970: 1_778_490_000)

    /// How many times SQLite has compiled again each statement prepared on the writer connection.
    private func recompilations(_ store: AccessoryStore) throws -> [String: Int32] {
        try store.database.writeWithoutTransaction { db in
            var counts: [String: Int32] = [:]
            var statement = sqlite3_next_stmt(db.sqliteConnection, nil)
            while let current = statement {
                counts[String(cString: sqlite3_sql(current)), default: 0] += sqlite3_stmt_status(current, SQLITE_STMTSTATUS_REPREPARE, 0)
                statement = sqlite3_next_stmt(db.sqliteConnection, current)
            }
            return counts
        }
    }

    /// What a fuzzer and the daemon do in turn: write a batch, then read everything back.
    private func cycle(_ store: AccessoryStore, round: Int) throws {
        let event = try HostEvent.test(UInt64(round + 1), .add(HostNotification(source: "s", id: "n\(round)", sourceName: "S", body: "b"), .standard), now: start)
        var burst = BurstLimiter(limit: .unlimited)
        _ = try store.applyBatch([(event, exchange.exchangeID)], now: start, conditions: .noon(), burst: &burst)
        _ = try store.notifications(includeRemoved: true)
        _ = try store.retentionTotals()
        _ = try store.activeExchange(keyID: [1])
    }

    @Test("Reads do not make the writer's statements compile again", arguments: ["memory", "disk"])
    func readsKeepStatements(kind: String) throws {
        let directory = try TemporaryDirectory("statements")
        defer { directory.remove() }
        let store = kind == "memory" ? try AccessoryStore.inMemory() : try AccessoryStore(path: directory.path + "/store.sqlite")
        try store.saveExchange(exchange, keyID: [1], now: start)
        try cycle(store, round: 0)
        let before = try recompilations(store)
        for round in 1...3 { try cycle(store, round: round) }
        let after = try recompilations(store)
        let recompiled = after.filter { $0.value > (before[$0.key] ?? 0) }.keys.sorted()
        #expect(recompiled.isEmpty, "compiled again: \(recompiled)")
    }
}
