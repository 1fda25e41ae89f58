import Foundation
import Glibc
@testable import NotifBridgeHooks
import NotifBridgeTestSupport
import Synchronization
import Testing

/// What `ChildSupervisor` adds to swift-subprocess, each in the case the library alone gets wrong.
@Suite("Child process supervision")
struct ChildProcessTests {
    /// Reads the pid a script wrote, once it exists.
    private func pid(in path: String) throws -> pid_t {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test("A grandchild that ignores SIGTERM is killed once the leader has gone, well before the grace")
    func groupKilledAfterLeaderExits() async throws {
        let directory = try TemporaryDirectory("child-grandchild")
        defer { directory.remove() }
        let pidFile = directory.path + "/grandchild.pid"
        let log = ResultLog()
        let runner = HookRunner(
            command: ["/bin/sh", "-c", #"(trap "" TERM; exec sleep 30) & echo $! > "$0"; wait"#, pidFile],
            timeout: .milliseconds(300), killGrace: .seconds(20), onResult: log.append)

        runner.submit(Data("{}".utf8))
        #expect(await runner.waitUntilIdle(timeout: .seconds(5)))
        let result = try #require(log.all.first)
        #expect(result.timedOut && result.signal == SIGTERM)
        let grandchild = try pid(in: pidFile)
        #expect(await HookFixture.eventually { HookFixture.processIsGone(grandchild) })
    }

    @Test("A leader that closes its output but keeps running still meets its deadline")
    func closedOutputStillTimesOut() async throws {
        let log = ResultLog()
        let runner = HookRunner(
            command: ["/bin/sh", "-c", "exec >&- 2>&-; sleep 30"], timeout: .milliseconds(300), onResult: log.append)
        runner.submit(Data())
        #expect(await runner.waitUntilIdle(timeout: .seconds(5)))
        let result = try #require(log.all.first)
        #expect(result.timedOut && result.signal == SIGTERM)
    }

    @Test("Cancelling Command.run terminates the child's group, and is not reported as a timeout")
    func cancellationStops() async throws {
        let directory = try TemporaryDirectory("child-cancel")
        defer { directory.remove() }
        let marker = directory.path + "/started"
        let task = Task {
            await Command.run(
                ["/bin/sh", "-c", "echo started; touch \"$0\"; sleep 30", marker], input: Data(), timeout: .seconds(30),
                killGrace: .seconds(5), outputLimit: 100)
        }
        // Cancelled once the child has written its line. A fixed 300 ms was too short in the
        // full suite on a loaded machine: a step of swift-subprocess's runs on the global
        // executor (see ChildExecutor), which CPU-bound tests can keep busy for over 20 s.
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: marker), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(FileManager.default.fileExists(atPath: marker), "the child did not start within 60 s")
        let started = ContinuousClock.now
        task.cancel()
        let result = await task.value
        // Far below the child's 30 s: it was terminated, not waited for (margin for a loaded machine).
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(result.signal == SIGTERM && !result.timedOut && result.launchError == nil)
        #expect(result.output == Array("started\n".utf8))
    }

    @Test("stdin holds the whole input for a child that reads it late, and nothing for one given none")
    func standardInput() async throws {
        let input = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        let late = await Command.run(
            ["/bin/sh", "-c", "sleep 0.2; wc -c"], input: input, timeout: .seconds(5),
            killGrace: .seconds(1), outputLimit: 100)
        #expect(late.exitStatus == 0)
        #expect(String(decoding: late.output, as: UTF8.self).trimmingCharacters(in: .whitespaces) == "300000\n")

        let none = await ChildProcess.run(
            ["/bin/sh", "-c", "wc -c"], input: nil, environment: ChildProcess.environment(adding: [:]),
            limits: .init(timeout: .seconds(5), killGrace: .seconds(1), outputLimit: 100), stop: StopSignal())
        #expect(none.exitStatus == 0)
        #expect(String(decoding: none.output, as: UTF8.self).trimmingCharacters(in: .whitespaces) == "0\n")
    }

    @Test("Supervision runs on the children's own thread, so a busy global executor cannot delay a deadline")
    func runsOnChildExecutor() async throws {
        let threads = Threads()
        let runner = HookRunner(command: ["/bin/sh", "-c", "exit 0"], timeout: .seconds(5)) { _ in
            threads.record(ChildExecutor.shared.isCurrent)
        }
        runner.submit(Data())
        #expect(await runner.waitUntilIdle(timeout: .seconds(5)))
        #expect(threads.all == [true])
    }
}

/// For each result, whether `onResult` ran on `ChildExecutor`'s thread.
private final class Threads: Sendable {
    private let onChildExecutor = Mutex<[Bool]>([])
    func record(_ isChildExecutor: Bool) { onChildExecutor.withLock { $0.append(isChildExecutor) } }
    var all: [Bool] { onChildExecutor.withLock { $0 } }
}
