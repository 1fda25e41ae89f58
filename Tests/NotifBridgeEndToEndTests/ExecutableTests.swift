import Foundation
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

/// The `notifbridge` executable itself, which `swift test` builds beside the test bundle.
@Suite("The notifbridge executable")
struct ExecutableTests {
    /// The executable beside the test bundle; `swift test` builds it, so its absence is a failure.
    static func executable() throws -> String {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("notifbridge").path
        try #require(FileManager.default.isExecutableFile(atPath: path), "swift test builds \(path)")
        return path
    }

    /// `notifbridge accessory | head -1`: once the reader has gone, the accessory goes on
    /// storing and acknowledging, says once on standard error that its output is closed, and
    /// still stops cleanly. (It used to trap at its next line.)
    @Test("The accessory goes on when the reader of its output exits")
    func readerGone() async throws {
        let executable = try Self.executable()
        let directory = try TemporaryDirectory("closed-output")
        defer { directory.remove() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["accessory", "--state", directory.path, "--port", "0"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The first line names the port; then the reader goes away, as `head -1` does.
        var firstLine = Data()
        while !firstLine.contains(UInt8(ascii: "\n")) {
            let data = output.fileHandleForReading.availableData
            try #require(!data.isEmpty, "the accessory exited before listening")
            firstLine.append(data)
        }
        try output.fileHandleForReading.close()
        let line = String(decoding: firstLine, as: UTF8.self)
        let port = try #require(line.split(separator: " ").dropFirst(2).first?.split(separator: ":").last.flatMap { Int($0) }, "no port in \(line)")

        // Each notification is a line the accessory can no longer write; each is still acknowledged.
        let (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            var sequences: Set<UInt64> = []
            for index in 1...3 { sequences.insert(try connection.send(.add(TestHost.note("closed-\(index)"), .standard))) }
            return try await connection.waitForReceipts(sequences)
        }
        #expect(receipts.count == 3 && receipts.values.allSatisfy(\.stored))
        #expect(process.isRunning)

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr.components(separatedBy: "standard output is closed").count == 2, "one note, not one per line: \(stderr)")
    }

    /// The demo's accessory: a demo killed by SIGKILL cannot stop it, so it watches its parent.
    @Test("--exit-with-parent: the accessory stops once the process that started it is gone")
    func exitsWithParent() async throws {
        let executable = try Self.executable()
        let directory = try TemporaryDirectory("exit-with-parent")
        defer { directory.remove() }
        let state = directory.path + "/state", pidFile = directory.path + "/accessory.pid"
        let parent = Process()
        parent.executableURL = URL(fileURLWithPath: "/bin/sh")
        parent.arguments = ["-c", #""$0" accessory --state "$1" --port 0 --exit-with-parent >/dev/null 2>&1 & echo $! > "$2"; wait"#, executable, state, pidFile]
        try parent.run()
        try await TestWait.until("the accessory to listen") { FileManager.default.fileExists(atPath: state + "/control.sock") }
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Self.isRunning(pid))
        kill(parent.processIdentifier, SIGKILL)
        parent.waitUntilExit()
        try await TestWait.until("the accessory to stop without its parent") { !Self.isRunning(pid) }
    }

    /// A mistake in the options is found before anything is printed, not below the policy.
    @Test("policy: a wrong --at is refused before the policy is printed", arguments: [
        (["--at", "25:00", "--sample", "Examples/sample-call.json"], "--at 25:00 is not HH:MM"),
        (["--at", "22:00"], "--at is the time of --sample's decision"),
    ])
    func policyRefusesFirst(arguments: [String], message: String) throws {
        let executable = try Self.executable()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["policy"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(printed.isEmpty, "printed before refusing: \(String(decoding: printed, as: UTF8.self))")
        #expect(said.contains(message), "\(said)")
    }

    /// Alive and not a zombie (an orphan's new parent may not have reaped it yet).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        return !stat[afterName.upperBound...].hasPrefix("Z")
    }
}
