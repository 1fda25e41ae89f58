import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
@_spi(Fuzzing) import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("SQLite store")
struct AccessoryStoreTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 1, count: 1120))
    let keyID: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]

    private func event(_ sequence: UInt64, _ operation: HostOperation) throws -> HostEvent {
        try .test(sequence, operation)
    }

    private func note(_ id: String, body: String = "hello") -> HostNotification {
        HostNotification(source: "com.apple.MobileSMS", id: id, sourceName: "Messages", title: "Anna", body: body)
    }

    private func apply(_ store: AccessoryStore, _ sequence: UInt64, _ operation: HostOperation, exchangeID: UInt64? = nil) throws -> ApplyOutcome {
        var burst = BurstLimiter(limit: .unlimited)
        return try store.apply(try event(sequence, operation), exchangeID: exchangeID ?? exchange.exchangeID, now: Date(), conditions: .noon(), burst: &burst)
    }

    @Test("Notifications and the exchange survive closing and reopening the file")
    func durability() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        do {
            let store = try AccessoryStore(path: path)
            try store.saveExchange(exchange, keyID: keyID, now: Date())
            #expect(try apply(store, 1, .add(note("a"), .standard)).alerted)
            _ = try apply(store, 2, .add(note("b"), .standard))
            _ = try apply(store, 3, .remove(source: "com.apple.MobileSMS", id: "b"))
        }
        let reopened = try AccessoryStore(path: path)
        #expect(try reopened.activeExchange(keyID: keyID) == exchange)
        #expect(try reopened.notifications().map(\.notificationIdentifier) == ["a"])
        #expect(try reopened.notifications(includeRemoved: true).count == 2)
        // A replay after the reopen is still recognised.
        let replay = try apply(reopened, 1, .add(note("a"), .standard))
        #expect(replay.ledger == .ignore(.stale))
        #expect(!replay.alerted)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    /// Notification text reaches the WAL first; SQLite gives the WAL and the shared memory the
    /// database file's mode when it creates them, so the file must be 0600 before it opens.
    @Test("A new store's database, WAL and shared-memory files are 0600 from the start")
    func privateFromTheStart() throws {
        let directory = try TemporaryDirectory("store-mode")
        defer { directory.remove() }
        let path = directory.path + "/accessory.sqlite"
        let store = try AccessoryStore(path: path)
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            #expect(stat(file, &info) == 0, "\(file) exists while the store is open")
            #expect(info.st_mode & 0o777 == 0o600, "\(file)")
        }
    }

    @Test("An update keeps the alerted state and never alerts again")
    func updateKeepsAlerted() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/a.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        _ = try apply(store, 1, .add(note("a"), .standard))
        let update = try apply(store, 2, .update(note("a", body: "edited")))
        #expect(update.ledger == .replace)
        #expect(!update.alerted)
        let record = try #require(try store.notification(source: "com.apple.MobileSMS", id: "a"))
        #expect(record.alerted)
        #expect(record.notification.body.plainText == "edited")
        #expect(record.revision == Revision(epoch: 1, sequence: 2))
    }

    @Test("Remove-all marks everything older removed and holds back late adds")
    func removeAll() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/a.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        for (sequence, id) in [(1, "a"), (2, "b"), (4, "d")] as [(UInt64, String)] { _ = try apply(store, sequence, .add(note(id), .standard)) }
        let outcome = try apply(store, 5, .removeAll)
        #expect(outcome.removedCount == 3)
        #expect(try apply(store, 3, .add(note("c"), .standard)).ledger == .ignore(.beforeRemoveAll))
        #expect(try apply(store, 6, .add(note("e"), .standard)).alerted)
        #expect(try store.notifications().map(\.notificationIdentifier) == ["e"])
    }

    @Test("A batch commits together; a failing event undoes only itself")
    func batch() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/a.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        var burst = BurstLimiter(limit: .unlimited)
        let results = try store.applyBatch(
            [
                (try event(1, .add(note("a"), .standard)), exchange.exchangeID),
                (try event(2, .add(note("b"), .standard)), 0xDEAD),
                (try event(3, .update(note("a", body: "edited"))), exchange.exchangeID),
            ],
            now: Date(),
            conditions: .noon(),
            burst: &burst
        )
        #expect(results.count == 3)
        #expect((try? results[0].get())?.alerted == true)
        #expect(throws: AccessoryStore.UnknownExchange.self) { try results[1].get() }
        #expect((try? results[2].get())?.ledger == .replace)
        #expect(try store.notifications().map(\.notificationIdentifier) == ["a"])
        #expect(try store.notification(source: "com.apple.MobileSMS", id: "a")?.notification.body.plainText == "edited")
    }

    @Test("A full burst holds back ordinary alerts but never calls, critical or time-sensitive ones", arguments: [
        (HostAlerting.standard, [HostNotification.AttributeInput](), false),
        (HostAlerting(shouldAlert: false, canAlert: true), [], false),
        (HostAlerting.standard, [.timeSensitive], true),
        (HostAlerting(sound: .init(ignoreSilentMode: true)), [.critical], true),
        (HostAlerting(kind: .incomingCall), [], true),
        (HostAlerting(kind: .timer), [], true),
    ])
    func burstExemptions(alerting: HostAlerting, attributes: [HostNotification.AttributeInput], alerts: Bool) throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/store.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        var n = note("urgent")
        n.attributes = attributes
        let conditions = AlertConditions.noon()
        var full = BurstLimiter(limit: .init(maxAlerts: 1))
        full.advance(.alerted(at: conditions.now))
        let outcome = try store.apply(try event(1, .add(n, alerting)), exchangeID: exchange.exchangeID, now: Date(), conditions: conditions, burst: &full)
        #expect(outcome.stored)
        #expect(outcome.alerted == alerts)
    }

    /// The store hands back the burst state moved by the events it stored, and by nothing else.
    @Test("Within a batch each event sees its predecessors' burst steps; a failed event takes no place")
    func batchBurstSteps() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/a.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        var burst = BurstLimiter(limit: .init(maxAlerts: 2, windowSeconds: 600))
        let conditions = AlertConditions.noon()
        let events: [(UInt64, String, UInt64)] = [(1, "a", exchange.exchangeID), (2, "b", 0xDEAD), (3, "c", exchange.exchangeID), (4, "d", exchange.exchangeID)]
        let results = try store.applyBatch(
            try events.map { (event: try event($0.0, .add(note($0.1), .standard)), exchangeID: $0.2) },
            now: Date(), conditions: conditions, burst: &burst
        )
        #expect(results.map { (try? $0.get())?.alerted } == [true, nil, true, false])
        #expect((try? results[3].get())?.record?.alertDecision?.coalesced == true)
        #expect(burst.pendingSummary == 1, "d is counted for the summary")
        let replay = try store.apply(try event(4, .add(note("d"), .standard)), exchangeID: exchange.exchangeID, now: Date(), conditions: conditions, burst: &burst)
        #expect(!replay.stored && burst.pendingSummary == 1, "an ignored replay is not counted again")
    }

    @Test("A newer exchange outranks sequences of an older one")
    func epochs() throws {
        let directory = try TemporaryDirectory("store")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/a.sqlite")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        _ = try apply(store, 50, .add(note("a"), .standard))
        var second = exchange
        second.encapsulatedKey = Data(repeating: 2, count: 1120)
        #expect(try store.saveExchange(second, keyID: keyID, now: Date()) == 2)
        #expect(try store.activeExchange(keyID: keyID) == second)
        let removal = try apply(store, 1, .remove(source: "com.apple.MobileSMS", id: "a"), exchangeID: second.exchangeID)
        #expect(removal.ledger == .markRemoved)
        #expect(throws: AccessoryStore.UnknownExchange.self) { try apply(store, 1, .removeAll, exchangeID: 42) }
    }

    @Test("A sequence above 2^63 − 1 is refused with an error, not a trap")
    func sequenceOutOfRange() throws {
        let store = try AccessoryStore.inMemory()
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        #expect(throws: AccessoryStore.SequenceOutOfRange.self) { try apply(store, ContentLimits.maxSequence + 1, .add(note("a"), .standard)) }
        let last = try apply(store, ContentLimits.maxSequence, .add(note("a"), .standard))
        #expect(last.ledger == .insert && last.alerted)
        #expect(try apply(store, 1, .removeAll).removedCount == 0, "the record at 2^63 − 1 is newer than a remove-all at 1")
    }

    @Test("An in-memory store applies the same rules and keeps nothing on disk")
    func inMemory() throws {
        let store = try AccessoryStore.inMemory()
        #expect(store.path == ":memory:")
        try store.saveExchange(exchange, keyID: keyID, now: Date())
        let first = try apply(store, 1, .add(note("a"), .standard))
        #expect(first.ledger == .insert && first.alerted)
        #expect(try apply(store, 1, .add(note("a"), .standard)).ledger == .ignore(.stale))
        #expect(try store.notifications().map(\.notificationIdentifier) == ["a"])
        #expect(try AccessoryStore.inMemory().notifications().isEmpty)
        try store.eraseEverything()
        #expect(try store.notifications(includeRemoved: true).isEmpty)
        #expect(try store.saveExchange(exchange, keyID: keyID, now: Date()) == 1, "epochs start again")
        let again = try apply(store, 1, .add(note("a"), .standard))
        #expect(again.ledger == .insert && again.alerted)
    }
}

extension AlertConditions {
    /// The default settings at 12:00, now.
    static func noon() -> AlertConditions {
        AlertConditions(settings: .default, minuteOfDay: 720, now: .now)
    }
}

@Suite("Key file")
struct KeyFileTests {
    @Test("Generated once with mode 0600, then loaded unchanged", arguments: CipherSuite.allCases)
    func createThenLoad(suite: CipherSuite) throws {
        let directory = try TemporaryDirectory("keys")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: suite)
        let (created, isNew) = try file.loadOrCreate(suite)
        #expect(isNew)
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let (loaded, isNewAgain) = try file.loadOrCreate(suite)
        #expect(!isNewAgain)
        #expect(loaded.publicKeyRepresentation == created.publicKeyRepresentation)
    }

    @Test("A key file readable by others is refused, not used")
    func insecurePermissions() throws {
        let directory = try TemporaryDirectory("keys")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: .xWing)
        _ = try file.loadOrCreate(.xWing)
        chmod(file.path, 0o644)
        #expect(throws: KeyFile.Failure.self) { try file.loadOrCreate(.xWing) }
    }

    @Test("A damaged key file is reported and left as it is, never replaced by a new key")
    func damagedFile() throws {
        let directory = try TemporaryDirectory("keys")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: .p256)
        let garbage = Data("not a key".utf8)
        #expect(FileManager.default.createFile(atPath: file.path, contents: garbage, attributes: [.posixPermissions: 0o600]))
        #expect(throws: KeyFile.Failure.self) { try file.loadOrCreate(.p256) }
        #expect(FileManager.default.contents(atPath: file.path) == garbage)
    }
}

/// Everything at the key's path that is not a key is refused in the file's terms, and left as
/// it was: a new key in its place would silently cut off the iPhone that knows the old one.
@Suite("Key file refusals")
struct KeyFileRefusalTests {
    static let valid = #"{"format":1,"secret":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","suite":"XWing"}"#

    @Test("each kind of file that is not a key says what it is", arguments: [
        ("truncated", String(valid.prefix(30)), "not a NotifBridge key file (not JSON)"),
        ("no secret", #"{"format":1,"suite":"XWing"}"#, #"not a NotifBridge key file (no "secret")"#),
        ("unknown suite", #"{"format":1,"secret":"AAEC","suite":"p256"}"#, #"not a NotifBridge key file ("suite" is not valid)"#),
        ("format 2", valid.replacingOccurrences(of: #""format":1"#, with: #""format":2"#), "format 2 is not one this accessory reads (1)"),
        ("short secret", #"{"format":1,"secret":"AAEC","suite":"XWing"}"#, "its secret is not a XWing key (3 bytes)"),
        ("too long", valid + String(repeating: " ", count: KeyFile.maxFileLength - valid.utf8.count + 1), "it is longer than 4096 bytes"),
    ])
    func refusedFiles(_ what: String, contents: String, reason: String) throws {
        let directory = try TemporaryDirectory("key-refusals")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: .xWing)
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]))
        let error = #expect(throws: KeyFile.Failure.self) { try file.loadOrCreate(.xWing) }
        #expect(error?.description == "key file \(file.path) cannot be used: \(reason)")
        #expect(FileManager.default.contents(atPath: file.path) == Data(contents.utf8))
    }

    @Test("a key padded to the length limit still loads")
    func atLimit() throws {
        let directory = try TemporaryDirectory("key-limit")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: .xWing)
        let padded = Self.valid + String(repeating: " ", count: KeyFile.maxFileLength - Self.valid.utf8.count)
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(padded.utf8), attributes: [.posixPermissions: 0o600]))
        #expect(try file.load(.xWing) != nil)
    }

    @Test("a link to nothing, a directory and a device are refused; the link stays a link", arguments: ["dangling", "directory", "device"])
    func notAFile(_ what: String) throws {
        let directory = try TemporaryDirectory("key-not-a-file")
        defer { directory.remove() }
        let file = KeyFile(directory: directory.path, suite: .xWing)
        let target = directory.path + "/unmounted/identity-xwing.key"
        switch what {
        case "dangling": try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: target)
        case "directory": try FileManager.default.createDirectory(atPath: file.path, withIntermediateDirectories: false)
        default: try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/dev/null")
        }
        let error = #expect(throws: KeyFile.Failure.self) { try file.loadOrCreate(.xWing) }
        let reason = [
            "dangling": "it is a symbolic link to \(target), which does not exist (a volume not mounted?); restore it, or remove the link and a new key is made",
            "directory": "it is a directory, not a file",
            "device": "it is not a regular file",
        ][what]!
        #expect(error?.description == "key file \(file.path) cannot be used: \(reason)")
        if what != "directory" {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) != nil, "still a link")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }
}

@Suite("Store retention")
struct RetentionTests {
    let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 3, count: 1120))

    private func add(_ store: AccessoryStore, _ sequence: UInt64, id: String, body: String = "x", at date: Date) throws {
        var event = HostEvent()
        event.sequence = sequence
        event.event = try DataProvider.event(for: .add(HostNotification(source: "s", id: id, sourceName: "S", body: body), .standard), now: date)
        var burst = BurstLimiter(limit: .unlimited)
        _ = try store.apply(event, exchangeID: exchange.exchangeID, now: date, conditions: .noon(), burst: &burst)
    }

    private func open(_ directory: TemporaryDirectory, _ retention: Retention) throws -> AccessoryStore {
        let store = try AccessoryStore(path: directory.path + "/r.sqlite", retention: retention)
        try store.saveExchange(exchange, keyID: [1], now: Date())
        return store
    }

    @Test("Count: the limit is kept, one more drops the oldest")
    func count() throws {
        let directory = try TemporaryDirectory("retention")
        defer { directory.remove() }
        let store = try open(directory, Retention(maxCount: 3))
        let start = Date()
        for i in 1...3 { try add(store, UInt64(i), id: "n\(i)", at: start.addingTimeInterval(Double(i))) }
        #expect(try store.notifications().count == 3)
        try add(store, 4, id: "n4", at: start.addingTimeInterval(4))
        #expect(try store.notifications().map(\.notificationIdentifier) == ["n4", "n3", "n2"])
    }

    @Test("Bytes: the oldest go until the rest fits")
    func bytes() throws {
        let directory = try TemporaryDirectory("retention")
        defer { directory.remove() }
        let store = try open(directory, Retention(maxBytes: 2500))
        let start = Date()
        for i in 1...3 { try add(store, UInt64(i), id: "n\(i)", body: String(repeating: "b", count: 1000), at: start.addingTimeInterval(Double(i))) }
        #expect(try store.notifications().map(\.notificationIdentifier) == ["n3", "n2"])
    }

    /// The totals retention reads are kept by triggers (no aggregate over the table per commit);
    /// every kind of write must keep them equal to a fresh count, and the limits must hold.
    @Test("Running totals match a fresh count after any mix of writes, and the limits hold", arguments: [1, 2, 3])
    func runningTotals(seed: UInt64) throws {
        let directory = try TemporaryDirectory("retention")
        defer { directory.remove() }
        let retention = Retention(maxCount: 6, maxBytes: 1500)
        let store = try open(directory, retention)
        var random = SeededGenerator(seed: seed)
        let start = Date()
        var burst = BurstLimiter(limit: .unlimited)
        for sequence in UInt64(1)...300 {
            let id = "n\(Int.random(in: 0..<10, using: &random))"
            let body = String(repeating: "b", count: Int.random(in: 0...400, using: &random))
            let operation: HostOperation = switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: .add(HostNotification(source: "s", id: id, sourceName: "S", body: body), .standard)
            case 5..<7: .update(HostNotification(source: "s", id: id, sourceName: "S", body: body))
            case 7..<9: .remove(source: "s", id: id)
            default: .removeAll
            }
            var event = HostEvent()
            event.sequence = sequence
            event.event = try DataProvider.event(for: operation, now: start)
            _ = try store.apply(event, exchangeID: exchange.exchangeID, now: start.addingTimeInterval(Double(sequence)), conditions: .noon(), burst: &burst)
            if sequence % 7 == 0 { try store.removeLocally(source: "s", id: id, now: start) }
            let totals = try store.retentionTotals()
            #expect(totals.kept == totals.counted, "after event \(sequence)")
            #expect(totals.counted[0] <= retention.maxCount && totals.counted[1] <= retention.maxBytes, "after event \(sequence)")
        }
    }

    @Test("Age: older than the limit is dropped, the limit itself is kept")
    func age() throws {
        let directory = try TemporaryDirectory("retention")
        defer { directory.remove() }
        let store = try open(directory, Retention(maxAgeDays: 1))
        let now = Date()
        try add(store, 1, id: "old", at: now.addingTimeInterval(-86_401))
        try add(store, 2, id: "edge", at: now.addingTimeInterval(-86_400))
        try add(store, 3, id: "new", at: now)
        #expect(try store.notifications().map(\.notificationIdentifier) == ["new", "edge"])
    }
}
