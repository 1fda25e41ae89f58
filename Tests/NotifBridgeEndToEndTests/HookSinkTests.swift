import Foundation
import Glibc
import Logging
import NotifBridgeAccessory
import NotifBridgeLogGate
import NotifBridgeTestSupport
import Testing

/// The policy file's hook as the daemon runs it: what a peer can make it log, and what is left
/// of it once the daemon stops.
@Suite("The hook alert sink", .timeLimit(.minutes(1)))
struct HookSinkTests {
    /// A hook that fails on every event fails as often as a peer sends one; its lines are
    /// rationed like the refusals' (five, then a count).
    @Test("A hook failing on every event: five warnings, not one per event")
    func failuresRationed() async throws {
        let log = CapturedLog()
        // One window for the whole test, however slow the machine.
        let sink = HookAlertSink(
            settings: .init(command: ["/bin/sh", "-c", "exit 3"], timeoutSeconds: 5), logger: Logger(label: "test", factory: { _ in log }),
            gate: LogGate(LogThrottle(interval: .seconds(3600))))
        for count in 1...30 { sink.alert(.burstSummary(count: count)) }
        #expect(await sink.waitUntilIdle(timeout: .seconds(50)))
        let failures = log.messages(at: .warning).filter { $0.contains("exited with 3") }
        #expect(failures.count == 5, "\(failures.count) warnings for 30 failures")
    }

    /// The sink rations through the daemon's gate, so what it held back is counted in the
    /// daemon's summaries, under the configured burst.
    @Test("The failures held back are counted by the daemon's gate")
    func heldBackCounted() async throws {
        let log = CapturedLog()
        // One window for all twenty runs, however slow the machine; the summary comes after it.
        let gate = AccessoryConfiguration.ResourceLimits(logBurst: 1, logInterval: .seconds(2)).makeLogGate()
        let sink = HookAlertSink(
            settings: .init(command: ["/bin/sh", "-c", "exit 3"], timeoutSeconds: 5), logger: Logger(label: "test", factory: { _ in log }), gate: gate)
        for count in 1...20 { sink.alert(.burstSummary(count: count)) }
        #expect(await sink.waitUntilIdle(timeout: .seconds(50)))
        #expect(log.messages(at: .warning).count == 1, "the configured burst of one")
        var summaries: [String] = []
        try await TestWait.until("the window to close") {
            summaries = gate.summaryLines()
            return !summaries.isEmpty
        }
        #expect(summaries == ["19 more hook lines from the hook in the last 2.0 seconds were not logged"])
    }

    /// The daemon need not run under systemd, whose control group would end the hooks for it:
    /// at the stop, a hook still running is terminated with its group.
    @Test("stop() ends a hook that is still running")
    func stopEndsRunningHook() async throws {
        let directory = try TemporaryDirectory("hook-stop")
        defer { directory.remove() }
        let pidFile = directory.path + "/hook.pid"
        let log = CapturedLog()
        let sink = HookAlertSink(
            settings: .init(command: ["/bin/sh", "-c", #"echo $$ > "$0"; exec sleep 300"#, pidFile], timeoutSeconds: 300),
            logger: Logger(label: "test", factory: { _ in log }), gate: LogGate(LogThrottle()))
        sink.alert(.burstSummary(count: 2))
        try await TestWait.until("the hook to start") {
            (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
        }
        let pid = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { if ExecutableTests.isRunning(pid) { kill(pid, SIGKILL) } }
        await sink.stop()
        // The stop's own wait is short; a stalled machine gets more here before the check.
        #expect(await sink.waitUntilIdle(timeout: TestWait.deadline))
        #expect(ExecutableTests.isRunning(pid) == false, "the hook outlived the stop")
        #expect(log.messages(at: .warning).isEmpty, "a hook the stop ends has not failed: \(log.messages(at: .warning))")
        #expect(log.messages(at: .info).contains { $0.contains("ended by the accessory's stop") })
    }

    /// A parent that ignores SIGCHLD (some supervisors and scripts do) passes that on through
    /// exec, and the kernel then reaps children before anyone can wait for them: every hook
    /// was reported as failed ("No child processes"), though it ran.
    @Test("Started with SIGCHLD ignored, the accessory still sees its hooks succeed")
    func childSignalIgnored() async throws {
        let directory = try TemporaryDirectory("hook-sigchld")
        defer { directory.remove() }
        let marker = directory.path + "/hook.out"
        let policy = directory.path + "/policy.json"
        let hook = #"{"hook": {"command": ["/bin/sh", "-c", "cat > \"$0\"", "\#(marker)"], "timeoutSeconds": 20, "on": "all"}}"#
        try Data(hook.utf8).write(to: URL(fileURLWithPath: policy))
        let payload = directory.path + "/payload.json"
        try Data(#"{"aps": {"alert": {"title": "Door", "body": "Someone is at the door"}}}"#.utf8).write(to: URL(fileURLWithPath: payload))
        let (process, port, _, errors) = try await ExecutableTests.startAccessory(
            state: directory.path + "/state", options: ["--config", policy], launcher: ["/usr/bin/env", "--ignore-signal=CHLD"])
        defer { if process.isRunning { process.terminate() } }
        let phone = try await ExecutableTests.run(["phone", "send", "--port", "\(port)", payload])
        #expect(phone.status == 0, "\(phone.errors)")
        try await TestWait.until("the hook to run") {
            (try? String(contentsOfFile: marker, encoding: .utf8))?.contains("Someone is at the door") == true
        }
        // A graceful stop waits for the hooks' results, so every warning is written by the exit.
        process.terminate()
        await ExecutableTests.waitForExit(process)
        let log = String(decoding: try await ExecutableTests.offPool { errors.fileHandleForReading.readDataToEndOfFile() }, as: UTF8.self)
        #expect(!log.contains("failed"), "\(log)")
    }
}
