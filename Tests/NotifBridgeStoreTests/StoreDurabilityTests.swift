import Foundation
import GRDB
@testable import NotifBridgeStore
import NotifBridgeTestSupport
import Testing

/// An acknowledged notification must survive a power cut, not only a crash: in WAL mode that
/// takes `synchronous = FULL` (an fsync of the WAL at every commit). GRDB sets NORMAL on a
/// pool's writer, which a power cut can roll back past commits already acknowledged.
@Suite("SQLite store durability")
struct StoreDurabilityTests {
    static let full = 2

    /// After a stop every row used to sit in accessory.sqlite-wal, and the main file alone (what
    /// a naive backup copies) was empty.
    @Test("once closed, the store is whole in its main file: a copy of that file alone holds every notification")
    func closeCheckpoints() throws {
        let directory = try TemporaryDirectory("checkpoint")
        defer { directory.remove() }
        let store = try StoreListingTests.filledStore(directory, count: 20, perTransaction: 5)
        let stored = try store.notifications(includeRemoved: true).count
        try store.close()
        let wal = (try? FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the WAL is emptied")
        let copy = directory.path + "/backup.sqlite"
        try FileManager.default.copyItem(atPath: store.path, toPath: copy)
        #expect(try AccessoryStore(path: copy).notifications(includeRemoved: true).count == stored)
        #expect(stored == 20)
    }

    /// A stop whose checkpoint failed (a full disk) exited 0 and said the store was stopped,
    /// while every notification was in the WAL alone. Here another reader holds a snapshot, so
    /// the truncating checkpoint cannot finish within the busy timeout.
    @Test("a checkpoint that cannot finish at close is reported, naming the WAL; nothing is lost")
    func closeReportsIncompleteCheckpoint() throws {
        let directory = try TemporaryDirectory("checkpoint-busy")
        defer { directory.remove() }
        let store = try StoreListingTests.filledStore(directory, count: 20, perTransaction: 5)
        let reader = try DatabaseQueue(path: store.path)
        try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification")
            #expect {
                try store.close()
            } throws: { error in
                error is AccessoryStore.CheckpointIncomplete && "\(error)".contains("safe in \(store.path)-wal, which must stay beside the store")
            }
            try db.execute(sql: "COMMIT")
        }
        try reader.close()
        #expect(try AccessoryStore(path: store.path).notifications(includeRemoved: true).count == 20)
    }

    @Test("every connection commits with synchronous = FULL, on a new file and on reopening it")
    func synchronousFull() throws {
        let directory = try TemporaryDirectory("sync")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        for opening in ["new file", "existing file"] {
            let store = try AccessoryStore(path: path)
            let modes = try store.synchronousModes()
            #expect(modes.writer == Self.full, "writer, \(opening)")
            #expect(modes.reader == Self.full, "reader, \(opening)")
        }
    }
}
