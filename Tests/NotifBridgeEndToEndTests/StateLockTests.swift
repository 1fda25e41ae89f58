import Foundation
import NotifBridgeAccessory
import NotifBridgeTestSupport
import Testing

/// One accessory per state directory: the second is refused before it touches the key or the
/// store, whatever became of the first's control socket, and the first goes on.
@Suite("One accessory per state directory")
struct StateLockTests {
    static func lockPath(_ directory: String) -> String { directory + "/accessory.lock" }

    @Test("a second accessory process on the directory is refused, naming the first; the first goes on, its key unchanged")
    func secondProcess() async throws {
        let directory = try TemporaryDirectory("lock-process")
        defer { directory.remove() }
        let (first, port, _, _) = try await ExecutableTests.startAccessory(state: directory.path)
        defer { if first.isRunning { first.terminate() } }
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".key") }
        let keys = try keyFiles.map { try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + $0)) }
        // The control socket alone used to be the guard; without it the second start went on.
        try FileManager.default.removeItem(atPath: directory.path + "/control.sock")

        let before = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        // Another suite, which once made its own key before the refusal.
        let second = try Self.runBriefly(["accessory", "--state", directory.path, "--port", "0", "--suite", "p256", "--exit-with-parent"])
        #expect(second.status != nil && second.status != 0, "the second accessory must exit at once, refused")
        let expected = "another accessory is already running with the state directory \(directory.path) (process \(first.processIdentifier) holds \(Self.lockPath(directory.path))); stop it first, or give this one its own --state"
        #expect(second.errors.contains(expected), "\(second.errors)")

        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == before, "nothing made or removed")
        #expect(!keyFiles.isEmpty)
        #expect(try keyFiles.map { try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + $0)) } == keys)
        let phone = try await ExecutableTests.run(["phone", "--port", "\(port)", "--id", "after-refusal", "--title", "Anna", "--body", "Lunch?"])
        #expect(phone.status == 0, "\(phone.output)\(phone.errors)")
        #expect(phone.output.contains("1 forwarded, 1 acknowledged"), "\(phone.output)")
    }

    /// Runs the executable for at most `seconds`: a second accessory that was not refused would
    /// otherwise serve until the test runner exits. `status` is nil if it had to be stopped.
    /// Its output goes to files, which a child it started may keep open without holding anyone up.
    static func runBriefly(_ arguments: [String], seconds: Double = 20) throws -> (status: Int32?, output: String, errors: String) {
        let directory = try TemporaryDirectory("run-briefly")
        defer { directory.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ExecutableTests.executable())
        process.arguments = arguments
        let outputPath = directory.path + "/out", errorsPath = directory.path + "/err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        let stopped = process.isRunning
        if stopped { process.terminate() }
        process.waitUntilExit()
        return (stopped ? nil : process.terminationStatus,
                try String(contentsOfFile: outputPath, encoding: .utf8), try String(contentsOfFile: errorsPath, encoding: .utf8))
    }

    @Test("in one process: refused while the first daemon holds the directory, free once its run has ended")
    func releasedWhenRunEnds() async throws {
        let directory = try TemporaryDirectory("lock-run")
        defer { directory.remove() }
        let first = try await RunningAccessory.start(stateDirectory: directory.path)
        #expect {
            _ = try StateDirectoryTests.startDaemon(directory.path)
        } throws: { error in
            "\(error)".contains("(process \(getpid()) holds \(Self.lockPath(directory.path)))")
        }
        await first.stop()
        // `first` is still referenced: the end of `run`, not deinit, let go of the lock.
        _ = try StateDirectoryTests.startDaemon(directory.path)
        withExtendedLifetime(first) {}
    }

    @Test("a daemon that never ran lets go of the directory when it goes away; the lock file is 0600")
    func releasedOnDeinit() throws {
        let directory = try TemporaryDirectory("lock-deinit")
        defer { directory.remove() }
        do {
            let unused = try StateDirectoryTests.startDaemon(directory.path)
            #expect(StateDirectoryTests.mode(Self.lockPath(directory.path)) == 0o600)
            #expect(throws: (any Error).self) { _ = try StateDirectoryTests.startDaemon(directory.path) }
            withExtendedLifetime(unused) {}
        }
        _ = try StateDirectoryTests.startDaemon(directory.path)
    }

    @Test("a lock file a crashed daemon left is no obstacle; it then names this process")
    func staleFile() throws {
        let directory = try TemporaryDirectory("lock-stale")
        defer { directory.remove() }
        let path = Self.lockPath(directory.path)
        try Data("999999\n".utf8).write(to: URL(fileURLWithPath: path))
        let daemon = try StateDirectoryTests.startDaemon(directory.path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
        withExtendedLifetime(daemon) {}
    }

    /// A child forked while a daemon of this process let go keeps a copy of the lock until it
    /// execs. The test plays that child: the file names this process, and another open file of
    /// the test's holds the lock, for a moment or for good.
    @Test("a lock naming this process that no daemon here holds is waited for, up to the grace; then refused", arguments: [true, false])
    func forkedCopy(letGo: Bool) throws {
        let directory = try TemporaryDirectory("lock-copy")
        defer { directory.remove() }
        let path = Self.lockPath(directory.path)
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        _ = write(fd, "\(getpid())\n", "\(getpid())\n".utf8.count)
        let copy = Thread {
            if letGo {
                usleep(200_000)
                close(fd)
            }
        }
        copy.start()
        defer { if !letGo { close(fd) } }
        if letGo {
            let daemon = try StateDirectoryTests.startDaemon(directory.path)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
            withExtendedLifetime(daemon) {}
        } else {
            #expect {
                _ = try StateDirectoryTests.startDaemon(directory.path)
            } throws: { error in
                "\(error)".contains("(process \(getpid()) holds \(path)); stop it first")
            }
        }
    }

    @Test("a holder that wrote no process ID is still refused, in plain words")
    func holderWithoutPID() throws {
        let directory = try TemporaryDirectory("lock-nopid")
        defer { directory.remove() }
        let path = Self.lockPath(directory.path)
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        _ = write(fd, "not a number", 12)
        #expect {
            _ = try StateDirectoryTests.startDaemon(directory.path)
        } throws: { error in
            "\(error)".contains("(\(path) is locked); stop it first")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/accessory.sqlite"), "refused before the store was made")
    }

    @Test("a symlink in the lock file's place is refused, not followed")
    func symlinkRefused() throws {
        let directory = try TemporaryDirectory("lock-symlink")
        defer { directory.remove() }
        let target = directory.path + "/elsewhere"
        try FileManager.default.createSymbolicLink(atPath: Self.lockPath(directory.path), withDestinationPath: target)
        #expect {
            _ = try StateDirectoryTests.startDaemon(directory.path)
        } throws: { error in
            "\(error)".hasPrefix("cannot open the lock file \(Self.lockPath(directory.path)): ")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
