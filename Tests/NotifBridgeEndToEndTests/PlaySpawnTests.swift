import Foundation
import Glibc
import NotifBridgeTestSupport
import Testing

/// `phone play --spawn` runs an accessory of its own, with a store in a temporary directory that
/// holds the scenario's notification text. Whatever ends the play, that accessory stops and the
/// directory goes, as the demo's does.
@Suite("phone play --spawn cleans up after itself", .timeLimit(.minutes(2)))
struct PlaySpawnTests {
    /// A temporary directory short enough for the spawned accessory's control socket inside it
    /// (a Unix socket path is at most 107 bytes), given to play as TMPDIR.
    static func shortTemporaryDirectory() throws -> String {
        let path = "/tmp/nbp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    static func play(_ scenario: String, temporary: String) throws -> Process {
        let file = temporary + "/scenario.yaml"
        try Data(scenario.utf8).write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ExecutableTests.executable())
        process.arguments = ["phone", "play", file, "--spawn"]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The spawned accessories' state directories under `temporary`.
    static func stateDirectories(in temporary: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter { $0.hasPrefix("notifbridge-play-") }.map { temporary + "/" + $0 }
    }

    /// Processes whose command line names `path` (the spawned accessory's `--state`).
    static func processes(naming path: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
            guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: line, as: UTF8.self).contains(path)
        }
    }

    static func waitForExit(_ process: Process) async throws {
        try await TestWait.until("play to exit") { !process.isRunning }
    }

    @Test("SIGTERM during a wait: the accessory stops and its directory is removed")
    func terminated() async throws {
        let temporary = try Self.shortTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let play = try Self.play("name: A long wait\nsteps:\n  - add: {id: m1, title: Anna, body: \"Secret 4711\"}\n  - settle\n  - wait: 60\n", temporary: temporary)
        defer { if play.isRunning { play.terminate() } }
        try await TestWait.until("the spawned accessory's store") {
            Self.stateDirectories(in: temporary).contains { FileManager.default.fileExists(atPath: $0 + "/accessory.sqlite") }
        }
        let state = try #require(Self.stateDirectories(in: temporary).first)
        // Past the settle: the add is stored, and play is in its wait.
        try await Task.sleep(for: .seconds(1))
        #expect(!Self.processes(naming: state).isEmpty, "the accessory runs while play does")
        kill(play.processIdentifier, SIGTERM)
        try await Self.waitForExit(play)
        #expect(play.terminationStatus == 128 + SIGTERM)
        try await TestWait.until("the spawned accessory to exit") { Self.processes(naming: state).isEmpty }
        #expect(!FileManager.default.fileExists(atPath: state), "the store with the notification's text is left in \(state)")
    }

    /// The directory used to be removed as the accessory was told to stop, and its last commit
    /// could write the store back afterwards (1 run in 3 in the report).
    @Test("Played to the end three times: no directory is left")
    func completed() async throws {
        let temporary = try Self.shortTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let scenario = "name: Two adds\nsteps:\n  - add: {id: m1, title: Anna, body: \"Secret\"}\n  - add: {id: m2, title: Anna, body: \"123456\"}\n"
        for run in 1...3 {
            let play = try Self.play(scenario, temporary: temporary)
            try await Self.waitForExit(play)
            #expect(play.terminationStatus == 0, "run \(run)")
            #expect(Self.stateDirectories(in: temporary).isEmpty, "run \(run) left \(Self.stateDirectories(in: temporary))")
        }
    }
}
