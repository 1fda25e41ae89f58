import Foundation
import NotifBridgeTestSupport
import Testing

/// Standard output or error on a full disk (`/dev/full` fails every write with ENOSPC): a
/// command still ends with its own exit status, and one whose output is the only copy of what it
/// made says the write failed instead of succeeding.
@Suite("Commands whose output cannot be written")
struct FullOutputTests {
    /// Runs the executable with standard output and/or error on `/dev/full`; the other stream,
    /// if any, is collected. The waits block, so they run off Swift's cooperative pool
    /// (``ExecutableTests/offPool(_:)``), which every test of the run shares.
    static func run(_ arguments: [String], fullOutput: Bool, fullErrors: Bool) async throws -> (reason: Process.TerminationReason, status: Int32, said: String) {
        let executable = try ExecutableTests.executable()
        return try await ExecutableTests.offPool { try runBlocking(executable, arguments, fullOutput: fullOutput, fullErrors: fullErrors) }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], fullOutput: Bool, fullErrors: Bool) throws -> (reason: Process.TerminationReason, status: Int32, said: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        guard let full = FileHandle(forWritingAtPath: "/dev/full") else { throw POSIXError(.ENOENT) }
        let collected = Pipe()
        process.standardOutput = fullOutput ? full : collected
        process.standardError = fullErrors ? full : collected
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A pipe the child was not given would never reach its end here.
        let said = fullOutput && fullErrors ? "" : String(decoding: collected.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus, said)
    }

    /// Foundation's `FileHandle.write(_:)` traps on a failed write: the error message on a full
    /// standard error crashed the command (SIGILL) instead of exiting 1.
    @Test("an error whose message cannot be written still exits 1, not with a crash")
    func errorOnFullStandardError() async throws {
        let result = try await Self.run(["phone", "--port", "1", "--title", "Anna", "--body", "Lunch?"], fullOutput: true, fullErrors: true)
        #expect(result.reason == .exit && result.status == 1, "\(result)")
    }

    /// The relay keeps only the tokens' digests: the printed line is their one copy.
    @Test("relay register whose tokens cannot be printed fails, saying to register again")
    func registerOnFullStandardOutput() async throws {
        let directory = try TemporaryDirectory("full-output")
        defer { directory.remove() }
        let result = try await Self.run(["relay", "register", "watch-1", "--state", directory.path], fullOutput: true, fullErrors: false)
        #expect(result.reason == .exit && result.status == 1, "\(result)")
        #expect(result.said.contains("the new tokens could not be written to standard output (No space left on device (errno 28)); the old ones are replaced already, so register watch-1 again"), "\(result.said)")
    }

    /// `print` drops a failed write silently: `--help > file` on a full disk ended in success.
    @Test("output that could not be written ends in failure, saying so", arguments: [["--help"], ["vectors", "--out", "VECTORS"]])
    func printedOutputChecked(arguments: [String]) async throws {
        let directory = try TemporaryDirectory("full-output")
        defer { directory.remove() }
        let result = try await Self.run(arguments.map { $0 == "VECTORS" ? directory.path + "/golden.json" : $0 }, fullOutput: true, fullErrors: false)
        #expect(result.reason == .exit && result.status == 1, "\(result)")
        #expect(result.said.hasSuffix("Error: standard output could not be written: No space left on device\n"), "\(result.said)")
    }
}
