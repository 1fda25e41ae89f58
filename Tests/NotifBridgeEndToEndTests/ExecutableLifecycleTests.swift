import Foundation
import NotifBridgeTestSupport
import Testing

/// The executable's processes from start to stop: signals, a reader that goes away, a parent
/// that dies, what a run prints at its end.
@Suite("The notifbridge executable's processes")
struct ExecutableLifecycleTests {
    /// `notifbridge accessory | head -1`: once the reader has gone, the accessory goes on
    /// storing and acknowledging, says once on standard error that its output is closed, and
    /// still stops cleanly. (It used to trap at its next line.)
    @Test("The accessory goes on when the reader of its output exits")
    func readerGone() async throws {
        let directory = try TemporaryDirectory("closed-output")
        defer { directory.remove() }
        let (process, port, output, errors) = try await ExecutableTests.startAccessory(state: directory.path)
        defer { if process.isRunning { process.terminate() } }
        // The reader goes away after the first line, as `head -1` does.
        try output.fileHandleForReading.close()

        // Each notification is a line the accessory can no longer write; each is still stored
        // and acknowledged (the phone exits 0 only then). The phone is a process of its own: in
        // the test runner, a busy pool could hold its Hello past the accessory's Hello timeout.
        for index in 1...3 {
            let phone = try await ExecutableTests.run(["phone", "--port", "\(port)", "--id", "closed-\(index)", "--title", "Anna", "--body", "Lunch?"])
            #expect(phone.status == 0, "\(phone.output)\(phone.errors)")
            #expect(phone.output.contains("1 forwarded, 1 acknowledged, 1 alerted"), "\(phone.output)")
        }
        #expect(process.isRunning)

        process.terminate()
        await ExecutableTests.waitForExit(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let stderr = String(decoding: try await ExecutableTests.offPool { errors.fileHandleForReading.readDataToEndOfFile() }, as: UTF8.self)
        #expect(stderr.components(separatedBy: "standard output is closed").count == 2, "one note, not one per line: \(stderr)")
    }

    /// SIGHUP (a closed terminal, a reload by habit) killed it at once, status 129, without the
    /// last commit and the checkpoint.
    @Test("SIGTERM, SIGINT and SIGHUP each stop the accessory gracefully: exit 0, the WAL emptied", arguments: [SIGTERM, SIGINT, SIGHUP])
    func gracefulSignals(signal: Int32) async throws {
        let directory = try TemporaryDirectory("signals")
        defer { directory.remove() }
        let (process, port, _, _) = try await ExecutableTests.startAccessory(state: directory.path)
        defer { if process.isRunning { process.terminate() } }
        let phone = try await ExecutableTests.run(["phone", "--port", "\(port)", "--title", "Anna"])
        #expect(phone.status == 0, "\(phone.output)\(phone.errors)")
        kill(process.processIdentifier, signal)
        await ExecutableTests.waitForExit(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let wal = (try? FileManager.default.attributesOfItem(atPath: directory.path + "/accessory.sqlite-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "checkpointed into accessory.sqlite at the stop")
    }

    /// The relay too: SIGHUP killed it with status 129, its WAL and shared memory left behind.
    @Test("SIGTERM, SIGINT and SIGHUP each stop relay serve gracefully: exit 0, the WAL emptied", arguments: [SIGTERM, SIGINT, SIGHUP])
    func relaySignals(signal: Int32) async throws {
        let directory = try TemporaryDirectory("relay-signals")
        defer { directory.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ExecutableTests.executable())
        process.arguments = ["relay", "serve", "--state", directory.path, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let first = try await ExecutableTests.firstLine(of: output)
        try #require(first.contains(UInt8(ascii: "\n")), "the relay exited before listening")
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("listening on "))
        kill(process.processIdentifier, signal)
        await ExecutableTests.waitForExit(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(process.terminationReason) \(process.terminationStatus)")
        let wal = (try? FileManager.default.attributesOfItem(atPath: directory.path + "/relay.sqlite-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
    }

    /// The load run's summary is two lines, the latencies on their own (a line is made
    /// terminal-safe whole, and its break had become a space).
    @Test("phone load prints its summary and its latencies on lines of their own")
    func loadSummaryLines() async throws {
        let directory = try TemporaryDirectory("load-lines")
        defer { directory.remove() }
        let (process, port, _, _) = try await ExecutableTests.startAccessory(state: directory.path)
        defer { if process.isRunning { process.terminate() } }
        let load = try await ExecutableTests.run(["phone", "load", "--port", "\(port)", "--count", "1"])
        #expect(load.status == 0, "\(load.errors)")
        let lines = load.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("phone │ sending 1 notification as fast as possible") }, "\(load.output)")
        #expect(lines.contains { $0.hasPrefix("phone │ 1 sent, 1 acknowledged, 0 failed") && $0.hasSuffix("notifications/s)") }, "\(load.output)")
        #expect(lines.contains { $0.hasPrefix("phone │ latency send → receipt: p50 ") }, "\(load.output)")
    }

    /// The demo's accessory: a demo killed by SIGKILL cannot stop it, so it watches its parent.
    @Test("--exit-with-parent: the accessory stops once the process that started it is gone")
    func exitsWithParent() async throws {
        let executable = try ExecutableTests.executable()
        let directory = try TemporaryDirectory("exit-with-parent")
        defer { directory.remove() }
        let state = directory.path + "/state", pidFile = directory.path + "/accessory.pid"
        let parent = Process()
        parent.executableURL = URL(fileURLWithPath: "/bin/sh")
        parent.arguments = ["-c", #""$0" accessory --state "$1" --port 0 --exit-with-parent >/dev/null 2>&1 & echo $! > "$2"; wait"#, executable, state, pidFile]
        try parent.run()
        try await TestWait.until("the accessory to listen") { FileManager.default.fileExists(atPath: state + "/control.sock") }
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ExecutableTests.isRunning(pid))
        kill(parent.processIdentifier, SIGKILL)
        await ExecutableTests.waitForExit(parent)
        try await TestWait.until("the accessory to stop without its parent") { !ExecutableTests.isRunning(pid) }
    }
}
