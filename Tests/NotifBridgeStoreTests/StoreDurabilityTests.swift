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
