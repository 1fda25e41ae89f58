import Foundation
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
