import Foundation
import GRDB
import Logging
@testable import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// A store that fails every commit (a full disk, a damaged file) logged a line for each event
/// without rationing: 2,770 lines for 2,770 notifications, onto the disk that was full.
@Suite("Store failures in the log")
struct StoreFailureLogTests {
    private static func delivery(_ sequence: UInt64) throws -> AccessorySession.Delivery {
        var event = HostEvent()
        event.sequence = sequence
        event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: "n\(sequence)", sourceName: "S", body: "b"), .standard), now: Date())
        return AccessorySession.Delivery(event: event, exchangeID: 1, featureID: "test")
    }

    @Test("a failing store logs one line a batch, at most the burst per window, then a summary")
    func rationed() throws {
        let directory = try TemporaryDirectory("store-failures")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/accessory.sqlite")
        try store.close()
        let log = CapturedLog()
        let gate = LogGate(LogThrottle(burst: 3, interval: .seconds(60)))
        let pipeline = AlertPipeline(
            store: store, policy: .unlimitedBursts, presenter: RecordingPresenter(), sinks: [], logger: Logger(label: "test", factory: { _ in log }),
            gate: gate, minuteOfDay: { 720 }
        )
        for sequence in 1...10 {
            #expect(pipeline.commit([try Self.delivery(UInt64(sequence))]).allSatisfy { (try? $0.get()) == nil })
        }
        let batch = try (11...17).map { try Self.delivery(UInt64($0)) }
        #expect(pipeline.commit(batch).count == 7)
        let errors = log.messages(at: .error)
        #expect(errors.count == 3, "\(errors)")
        #expect(errors.first?.hasPrefix("could not store event #1: ") == true, "\(errors)")
        #expect(gate.summaryLines().isEmpty, "the window is still open")
    }

    @Test("a batch's line names its first five events and how many", arguments: [
        ([UInt64(7)], "could not store event #7: boom"),
        ([1, 2, 3, 4, 5], "could not store 5 events (#1, #2, #3, #4, #5): boom"),
        ([1, 2, 3, 4, 5, 6], "could not store 6 events (#1, #2, #3, #4, #5, …): boom"),
    ])
    func failureLine(sequences: [UInt64], line: String) {
        struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }
        #expect(AlertPipeline.failureLine(sequences, Boom()) == line)
    }

    /// On a file system remounted read-only every commit failed with a disk I/O error, and the
    /// daemon ran on, pinging systemd's watchdog: nothing restarted it and nobody was told.
    @Test("a store error that will not pass stops the daemon, and run throws it; a full disk does not", arguments: [
        (DatabaseError(resultCode: .SQLITE_IOERR_WRITE), true),
        (DatabaseError(resultCode: .SQLITE_CORRUPT), true),
        (DatabaseError(resultCode: .SQLITE_NOTADB), true),
        (DatabaseError(resultCode: .SQLITE_FULL), false),
        (DatabaseError(resultCode: .SQLITE_BUSY), false),
    ])
    func brokenStoreStops(error: DatabaseError, stops: Bool) async throws {
        let directory = try TemporaryDirectory("store-broken")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        #expect(accessory.daemon.health.report(error) == stops)
        #expect(!accessory.daemon.health.report(error), "the first only")
        guard stops else {
            await accessory.stop()
            return
        }
        await #expect {
            try await accessory.task.value
        } throws: { thrown in
            thrown is StoreHealth.Broken && "\(thrown)".hasPrefix("the notification store \(directory.path)/accessory.sqlite failed in a way that will not pass (")
        }
    }

    /// The daemon heard only the commits of notifications: a store that broke during a key
    /// exchange ended that connection, and the daemon ran on until a notification failed.
    @Test("a store that breaks during a key exchange stops the daemon, and run throws it")
    func brokenDuringKeyExchange() async throws {
        let directory = try TemporaryDirectory("store-broken-exchange")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        try StoreDamage.corruptTables(ofStoreAt: directory.path + "/accessory.sqlite")
        _ = try? await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
        }
        do {
            try await TestWait.until("the daemon to hear that the store broke") { accessory.daemon.health.broken != nil }
        } catch {
            await accessory.stop()
            throw error
        }
        await #expect {
            try await accessory.task.value
        } throws: { thrown in
            ((thrown as? StoreHealth.Broken)?.underlying as? DatabaseError)?.resultCode == .SQLITE_CORRUPT
        }
    }
}
