import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// Pages read back exactly what one full read does, in the same order, whatever the page size,
/// also where a page boundary falls among notifications committed together (same received_at).
@Suite("SQLite store listing")
struct StoreListingTests {
    static func filledStore(_ directory: TemporaryDirectory, count: Int, perTransaction: Int) throws -> AccessoryStore {
        let store = try AccessoryStore(path: directory.path + "/accessory.sqlite", retention: Retention(maxCount: 10_000, maxBytes: 1 << 30, maxAgeDays: 3650))
        let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 1, count: 32))
        try store.saveExchange(exchange, keyID: [1, 2, 3], now: Date())
        var sequence: UInt64 = 0
        for start in stride(from: 0, to: count, by: perTransaction) {
            let now = Date(timeIntervalSince1970: 1_778_490_000 + Double(start))
            let events = try (start..<min(count, start + perTransaction)).map { index in
                sequence += 1
                var event = HostEvent()
                event.sequence = sequence
                event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "n\(index)", sourceName: "App", title: "t", body: "b"), .standard), now: now)
                return (event: event, exchangeID: exchange.exchangeID)
            }
            var burst = BurstLimiter(limit: .unlimited)
            for result in try store.applyBatch(events, now: now, conditions: .noon(), burst: &burst) {
                _ = try result.get()
            }
        }
        for index in stride(from: 0, to: count, by: 3) { try store.removeLocally(source: "s", id: "n\(index)", now: Date()) }
        return store
    }

    static func paged(_ store: AccessoryStore, size: Int, includeRemoved: Bool) throws -> [String] {
        var ids: [String] = []
        var cursor: NotificationCursor?
        repeat {
            let page = try store.notificationPage(after: cursor, limit: size, includeRemoved: includeRemoved)
            #expect(page.records.count <= size)
            ids += page.records.map(\.notificationIdentifier)
            cursor = page.next
        } while cursor != nil
        return ids
    }

    /// One damaged row made `respond list` fail whole: "cannot read the store: malformedProtobuf".
    @Test("a row that no longer decodes is left out and named; every other row is still listed", arguments: [1, 2, 5, 10])
    func damagedRowSkipped(size: Int) throws {
        let directory = try TemporaryDirectory("listing-damaged")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        let store = try Self.filledStore(directory, count: 5, perTransaction: 5)
        let whole = try store.notifications(includeRemoved: true).map(\.notificationIdentifier)
        try store.close()
        let database = try DatabaseQueue(path: path)
        try database.write { try $0.execute(sql: "UPDATE notification SET payload = x'deadbeef' WHERE notification_id = 'n2'") }
        try database.close()
        let reopened = try AccessoryStore(path: path)
        var ids: [String] = []
        var damaged: [DamagedRecord] = []
        var cursor: NotificationCursor?
        repeat {
            let page = try reopened.notificationPage(after: cursor, limit: size, includeRemoved: true)
            ids += page.records.map(\.notificationIdentifier)
            damaged += page.damaged
            cursor = page.next
        } while cursor != nil
        #expect(ids == whole.filter { $0 != "n2" })
        #expect(damaged.map(\.id) == ["n2"] && damaged.first?.source == "s")
    }

    /// A store with damaged pages was taken at start; it acknowledged notifications until a
    /// commit reached the damage, then failed every one while the daemon ran on.
    @Test("a store with damaged pages is refused at open, saying so and how to recover, and left as it was")
    func damagedPagesRefused() throws {
        let directory = try TemporaryDirectory("store-pages")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        try Self.filledStore(directory, count: 400, perTransaction: 50).close()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let pages = Int(try handle.seekToEnd()) / 4096
        // Page headers past the schema's pages (page 1 is the header and schema).
        for page in [pages / 3, pages / 2, 2 * pages / 3] {
            try handle.seek(toOffset: UInt64(page * 4096))
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 16))
        }
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            _ = try AccessoryStore(path: path)
        } throws: { error in
            let text = "\(error)"
            return error is AccessoryStore.Damaged && text.hasPrefix("it is damaged (SQLite's quick_check: ") && text.contains("sqlite3 \(path) .recover")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
    }

    @Test("pages of 1, 9, 10, 11, 66, 67 and 100 over 67 notifications, 10 per transaction", arguments: [1, 9, 10, 11, 66, 67, 100])
    func pagesMatchOneRead(size: Int) throws {
        let directory = try TemporaryDirectory("listing")
        defer { directory.remove() }
        let store = try Self.filledStore(directory, count: 67, perTransaction: 10)
        for includeRemoved in [false, true] {
            let whole = try store.notifications(includeRemoved: includeRemoved).map(\.notificationIdentifier)
            #expect(whole.count == (includeRemoved ? 67 : 44))
            #expect(try Self.paged(store, size: size, includeRemoved: includeRemoved) == whole)
        }
    }

    /// Listing and retention both walk the one age index (migration v6 dropped the index on
    /// (removed, age)): no listing sorts the table, however many records are stored.
    @Test("listing and retention read the age index; nothing sorts")
    func listingUsesTheAgeIndex() throws {
        let directory = try TemporaryDirectory("listing-plan")
        defer { directory.remove() }
        _ = try Self.filledStore(directory, count: 20, perTransaction: 5)
        let queue = try DatabaseQueue(path: directory.path + "/accessory.sqlite")
        let indexes = try queue.read { try $0.indexes(on: "notification").map(\.name) }
        #expect(indexes.contains("notification_by_age") && !indexes.contains("notification_by_time"))
        for sql in [
            "SELECT * FROM notification WHERE NOT removed ORDER BY received_at DESC, rowid DESC LIMIT 10",
            "SELECT * FROM notification WHERE NOT removed AND (received_at, rowid) < ('2026', 5) ORDER BY received_at DESC, rowid DESC LIMIT 10",
            "SELECT rowid, LENGTH(payload) AS size FROM notification ORDER BY received_at ASC, rowid ASC",
        ] {
            let details = try queue.read { db in try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String } }
            #expect(details.contains { $0.contains("notification_by_age") }, "\(sql): \(details)")
            #expect(!details.contains { $0.contains("TEMP B-TREE") }, "\(sql): \(details)")
        }
    }
}
