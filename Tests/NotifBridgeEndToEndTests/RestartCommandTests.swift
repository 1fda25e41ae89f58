import Foundation
import NotifBridgeTestSupport
import Testing

/// `phone play --restart-command` against an accessory the user runs: the obvious command starts
/// the new accessory in the background, and play must wait for the command, not for everything
/// the command started.
@Suite("phone play --restart-command")
struct RestartCommandTests {
    /// A loopback port that was free a moment ago: the accessory must come back on the same one.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(bound == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test("a restart command that starts the accessory with `&` lets play go on; its expectations hold")
    func backgroundedRestart() async throws {
        let executable = try ExecutableTests.executable()
        let directory = try TemporaryDirectory("restart-command")
        defer { directory.remove() }
        let state = directory.path + "/state", pidFile = directory.path + "/accessory.pid", log = directory.path + "/accessory.log"
        let port = try Self.freePort()
        // The first accessory is this test's own child; each restart stops the one whose process
        // ID the file holds, waits until it has gone, and starts the next in the background.
        let arguments = ["accessory", "--state", state, "--port", "\(port)"]
        let start = "\"\(executable)\" " + arguments.map { "\"\($0)\"" }.joined(separator: " ") + " >> \"\(log)\" 2>&1 & echo $! > \"\(pidFile)\""
        let restart = "pid=$(cat \"\(pidFile)\"); kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.05; done; " + start
        let first = Process()
        first.executableURL = URL(fileURLWithPath: executable)
        first.arguments = arguments
        FileManager.default.createFile(atPath: log, contents: nil)
        first.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        first.standardError = FileHandle.nullDevice
        try first.run()
        try Data("\(first.processIdentifier)\n".utf8).write(to: URL(fileURLWithPath: pidFile))
        defer {
            if first.isRunning { first.terminate() }
            if let pid = try? String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), let number = Int32(pid) {
                kill(number, SIGTERM)
            }
        }
        try await TestWait.until("the accessory to listen") { FileManager.default.fileExists(atPath: state + "/control.sock") }

        let scenario = TestFixtures.scenarios.appendingPathComponent("accessory-restart.yaml").path
        let play = try StateLockTests.runBriefly(
            ["phone", "play", scenario, "--port", "\(port)", "--state", state, "--restart-command", restart], seconds: 90)
        #expect(play.status == 0, "play did not finish (nil: stopped after 90 s): \(play.errors)")
        #expect(play.output.contains("expectations hold"), "\(play.output)\(play.errors)")
        #expect(play.output.components(separatedBy: "restarting the accessory").count == 3, "two restarts: \(play.output)")
        #expect(try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "listening on").count == 4, "three accessories in turn")
    }
}
