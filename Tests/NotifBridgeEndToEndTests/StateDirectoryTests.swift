import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeCrypto
@_spi(Testing) import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// The state directory holds the private key and every notification: 0700, as the README
/// promises, whether the daemon creates it or finds it.
@Suite("State directory mode")
struct StateDirectoryTests {
    /// Through FileManager: stat(2)'s fields are refused by a clean build of this target
    /// (MemberImportVisibility names another module as theirs).
    static func mode(_ path: String) -> UInt16 {
        guard let permissions = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int else { return 0xFFFF }
        return UInt16(permissions & 0o7777)
    }

    static func startDaemon(
        _ directory: String, suite: CipherSuite = .xWing, logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws -> AccessoryDaemon {
        try AccessoryDaemon(configuration: AccessoryConfiguration(stateDirectory: directory, port: 0, suite: suite), presenter: RecordingPresenter(), logger: logger)
    }

    @Test("a state directory the daemon creates is 0700")
    func created() throws {
        let parent = try TemporaryDirectory("state-new")
        defer { parent.remove() }
        let state = parent.path + "/a/b/state"
        _ = try Self.startDaemon(state)
        #expect(Self.mode(state) == 0o700)
    }

    @Test("an existing directory of ours is tightened to 0700 with a notice; 0700 is kept quietly", arguments: [
        (UInt16(0o700), false), (0o701, true), (0o710, true), (0o740, true), (0o755, true), (0o777, true),
    ])
    func tightened(found: UInt16, expectNotice: Bool) throws {
        let directory = try TemporaryDirectory("state-mode")
        defer { directory.remove() }
        chmod(directory.path, mode_t(found))
        let log = CapturedLog()
        _ = try Self.startDaemon(directory.path, logger: Logger(label: "test", factory: { _ in log }))
        #expect(Self.mode(directory.path) == 0o700)
        let notices = log.messages(at: .notice).filter { $0.hasPrefix("state directory \(directory.path) ") }
        #expect(notices.count == (expectNotice ? 1 : 0), "\(log.messages(at: .notice))")
        if expectNotice { #expect(notices.first?.contains(String(found, radix: 8)) == true) }
    }

    /// SQLite gives the WAL and shm files the database's mode: a store copied in at 0644 made
    /// notification text readable by others there.
    @Test("a store and its WAL found readable by others are made 0600 with a notice; new WAL and shm files follow")
    func storeFilesTightened() throws {
        let directory = try TemporaryDirectory("state-store-mode")
        defer { directory.remove() }
        let store = directory.path + "/accessory.sqlite"
        do { _ = try Self.startDaemon(directory.path) }
        try #require(FileManager.default.fileExists(atPath: store))
        chmod(store, 0o644)
        if FileManager.default.fileExists(atPath: store + "-wal") { chmod(store + "-wal", 0o640) }
        let log = CapturedLog()
        let daemon = try Self.startDaemon(directory.path, logger: Logger(label: "test", factory: { _ in log }))
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
            #expect(Self.mode(store + suffix) == 0o600, "accessory.sqlite\(suffix)")
        }
        #expect(log.messages(at: .notice).contains("\(store) had mode 644; changed to 600: it holds notification text"), "\(log.messages(at: .notice))")
        withExtendedLifetime(daemon) {}
    }

    @Test("a store that is not a database is refused, naming the file, and left as it was")
    func damagedStore() throws {
        let directory = try TemporaryDirectory("state-damaged")
        defer { directory.remove() }
        let store = directory.path + "/accessory.sqlite"
        let garbage = Data(repeating: 0x5A, count: 4096)
        try garbage.write(to: URL(fileURLWithPath: store))
        #expect {
            _ = try Self.startDaemon(directory.path)
        } throws: { error in
            "\(error)".hasPrefix("cannot open the notification store \(store): ")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == garbage)
    }

    /// It said "attempt to write a readonly database - while executing `CREATE TABLE
    /// grdb_issue_102 …`". Root writes past a file's mode, so as root the file is made immutable.
    @Test("a store that cannot be written is refused in words, naming the file, and left as it was")
    func unwritableStore() throws {
        let directory = try TemporaryDirectory("state-readonly")
        defer { directory.remove() }
        let store = directory.path + "/accessory.sqlite"
        withExtendedLifetime(try Self.startDaemon(directory.path)) {}
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let root = getuid() == 0
        if root {
            try #require(try Self.chattr("+i", store), "chattr +i, which root needs to make a file unwritable")
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: store)
        }
        defer { if root { _ = try? Self.chattr("-i", store) } }
        #expect {
            _ = try Self.startDaemon(directory.path)
        } throws: { error in
            "\(error)" == "cannot open the notification store \(store): \(store) cannot be written (a read-only file system, an immutable file, or its permissions), and the accessory writes each notification to it before acknowledging it"
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    private static func chattr(_ flag: String, _ path: String) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A deleted key file was replaced by a new key without a word: the iPhone paired with the
    /// old one was cut off, and nothing said why. The other suite's first key is not such a loss.
    @Test("a new key beside an exchange whose key file is gone is warned about; the other suite's first key is not", arguments: [true, false])
    func lostKeyWarned(deleteKey: Bool) async throws {
        let directory = try TemporaryDirectory("state-lost-key")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { try await $0.waitUntilEstablished() }
        await accessory.stop()
        let oldKey = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0 == "identity-xwing.key" })
        let keyID = hexString(accessory.daemon.keyID)
        if deleteKey { try FileManager.default.removeItem(atPath: directory.path + "/" + oldKey) }
        let log = CapturedLog()
        let suite: CipherSuite = deleteKey ? .xWing : .p256
        let daemon = try Self.startDaemon(directory.path, suite: suite, logger: Logger(label: "test", factory: { _ in log }))
        withExtendedLifetime(daemon) {}
        #expect(log.messages(at: .notice).contains { $0.hasPrefix("generated a new \(suite.rawValue) key ") })
        let warning = "the store holds a key exchange made with key \(keyID), whose key file is gone; the iPhone paired with that key cannot reach this one until it pairs again"
        #expect(log.messages(at: .warning).contains(warning) == deleteKey, "\(log.messages(at: .warning))")
    }

    @Test("a file where the state directory should be is refused")
    func notADirectory() throws {
        let parent = try TemporaryDirectory("state-file")
        defer { parent.remove() }
        let path = parent.path + "/state"
        try Data("x".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            try prepareStateDirectory(path)
        } throws: { error in
            "\(error)" == "state directory \(path): exists and is not a directory"
        }
    }

    @Test("a directory owned by someone else is refused, saying why, and left as it was")
    func notOurs() throws {
        let directory = try TemporaryDirectory("state-foreign")
        defer { directory.remove() }
        let foreign: String
        if geteuid() == 0 {
            chmod(directory.path, 0o755)
            try #require(chown(directory.path, 65534, 65534) == 0, "chown to nobody")
            foreign = directory.path
        } else {
            foreign = "/usr"
        }
        let before = Self.mode(foreign)
        #expect {
            _ = try Self.startDaemon(foreign)
        } throws: { error in
            "\(error)".contains(foreign) && "\(error)".contains("owned by uid")
        }
        #expect(Self.mode(foreign) == before)
    }
}
