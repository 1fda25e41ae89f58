import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
@_spi(Fuzzing) import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// A store written by an earlier version opens, and every row reads as it did then.
@Suite("SQLite store migrations")
struct StoreMigrationTests {
    /// Such a file used to be adopted and migrated without a word: our tables made inside
    /// another program's database, or a newer version's store rewritten by an older one.
    @Test("another program's database, and a store a newer version migrated, are refused untouched", arguments: ["foreign", "newer"])
    func notOurs(_ kind: String) throws {
        let directory = try TemporaryDirectory("store-not-ours")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        if kind == "foreign" {
            let queue = try DatabaseQueue(path: path)
            try queue.write { try $0.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')") }
            try queue.close()
        } else {
            try AccessoryStore(path: path).close()
            let queue = try DatabaseQueue(path: path)
            try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')") }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: AccessoryStore.NotOurs.self) { try AccessoryStore(path: path) }
        let expected = kind == "foreign"
            ? "it is another program's SQLite database (tables notes), not a NotifBridge store; move it away"
            : "a newer NotifBridge has changed it (migrations v99, which this version does not know); run that version, or a store of this version's own"
        #expect(error?.description == expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// The notification table as v2 left it: an `alerted` flag beside the decision.
    static func writeV2Store(at path: String, rows: [(id: String, alerted: Bool, removed: Bool, decision: String?)]) throws {
        let queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE key_exchange (epoch INTEGER PRIMARY KEY AUTOINCREMENT, exchange_id INTEGER NOT NULL UNIQUE, key_id BLOB NOT NULL,
                    cipher_suite TEXT NOT NULL, version TEXT NOT NULL, identifier TEXT NOT NULL, encapsulated_key BLOB NOT NULL,
                    active BOOLEAN NOT NULL, created_at DATETIME NOT NULL);
                CREATE TABLE notification (source_id TEXT NOT NULL, notification_id TEXT NOT NULL, payload BLOB NOT NULL, alerting BLOB,
                    alerted BOOLEAN NOT NULL, removed BOOLEAN NOT NULL, rev_epoch INTEGER NOT NULL, rev_seq INTEGER NOT NULL,
                    received_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, PRIMARY KEY (source_id, notification_id));
                CREATE INDEX notification_by_time ON notification (removed, received_at);
                CREATE TABLE remove_all_watermark (id INTEGER PRIMARY KEY CHECK (id = 1), rev_epoch INTEGER NOT NULL, rev_seq INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v2: alert decisions") { db in
            try db.execute(sql: "ALTER TABLE notification ADD COLUMN alert_decision TEXT")
        }
        try migrator.migrate(queue)
        try queue.write { db in
            for (index, row) in rows.enumerated() {
                let payload = try WireNotification.with { $0.id = .with { $0.sourceIdentifier = "s"; $0.notificationIdentifier = row.id } }.serializedBytes() as Data
                try db.execute(
                    sql: "INSERT INTO notification VALUES ('s', ?, ?, NULL, ?, ?, 1, ?, ?, ?, ?)",
                    arguments: [row.id, payload, row.alerted, row.removed, index + 1, Date(), Date(), row.decision]
                )
            }
        }
    }

    @Test("v2 → v3: the decision alone says whether it alerted; rows from before decisions keep their alert")
    func alertedFromTheDecision() throws {
        let directory = try TemporaryDirectory("migration")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        let alert = #"{"presentation":"alert","sound":"normal","haptic":"tap","persistent":false,"reason":"iOS recommends alerting"}"#
        let heldBack = #"{"presentation":"list","sound":"none","haptic":"none","persistent":false,"reason":"part of a burst; counted in the next summary alert"}"#
        try Self.writeV2Store(at: path, rows: [
            ("before-decisions", true, false, nil), ("alerted", true, false, alert), ("held-back", false, false, heldBack), ("tombstone", false, true, nil),
        ])

        let store = try AccessoryStore(path: path)
        let records = Dictionary(uniqueKeysWithValues: try store.notifications(includeRemoved: true).map { ($0.notificationIdentifier, $0) })
        #expect(records.mapValues(\.alerted) == ["before-decisions": true, "alerted": true, "held-back": false, "tombstone": false])
        #expect(records["before-decisions"]?.alertDecision?.presentation == .alert)
        #expect(records["alerted"]?.alertDecision?.reason == "iOS recommends alerting")
        #expect(records["held-back"]?.alertDecision?.presentation == .list)
        #expect(records["tombstone"]?.alertDecision == nil)
        let columns = try DatabaseQueue(path: path).read { try $0.columns(in: "notification").map(\.name) }
        #expect(!columns.contains("alerted"))
        #expect(columns.contains("alert_decision"))
        // v4 counted what was there into the running totals retention reads.
        let totals = try store.retentionTotals()
        #expect(totals.kept == totals.counted && totals.kept[0] == 4)

        // The migrated store takes new events as usual.
        let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 1, count: 32))
        try store.saveExchange(exchange, keyID: [1], now: Date())
        var event = HostEvent()
        event.sequence = 1
        event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "new", sourceName: "S", body: "b"), .standard), now: Date())
        var burst = BurstLimiter(limit: .unlimited)
        let outcome = try store.apply(event, exchangeID: exchange.exchangeID, now: Date(), conditions: .noon(), burst: &burst)
        #expect(outcome.alerted && outcome.record?.alerted == true)
    }
}
