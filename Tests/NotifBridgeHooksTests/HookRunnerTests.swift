import Foundation
import Glibc
@testable import NotifBridgeHooks
import NotifBridgeTestSupport
import Testing

@Suite("Hook runner")
struct HookRunnerTests {
    /// How long a test waits for the runner to go idle: an upper bound (the wait ends as soon as
    /// it is idle), generous because a full parallel run on a loaded 2-core machine can stall a
    /// test's task for seconds.
    static let settle = Duration.seconds(60)

    /// Writes its stdin to a fresh file in the directory given as its first argument.
    static let recordStdin = #"f=$(mktemp "$1/event.XXXXXX") && cat > "$f""#

    @Test("Each submitted event reaches the hook's stdin byte for byte")
    func deliversJSON() async throws {
        let directory = try TemporaryDirectory("hooks-stdin")
        defer { directory.remove() }
        let output = directory.path + "/events"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let hook = try HookFixture.script(in: directory.path, named: "hook", Self.recordStdin)
        let log = ResultLog()
        let runner = HookRunner(command: [hook, output], timeout: .seconds(5), maxConcurrent: 4, onResult: log.append)

        let events = (0..<20).map { Data(#"{"id":\#($0),"title":"Anna — \"hi\" 🎉","body":"a\nb"}"#.utf8) }
        for event in events { runner.submit(event) }

        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        #expect(Set(try HookFixture.fileContents(in: output)) == Set(events))
        #expect(try HookFixture.fileContents(in: output).count == 20)
        #expect(log.all.count == 20)
        #expect(log.all.allSatisfy { $0.exitStatus == 0 && $0.launchError == nil && !$0.timedOut && !$0.stopped })
        let statistics = runner.statistics
        #expect(statistics.started == 20 && statistics.succeeded == 20 && statistics.failed == 0)
        #expect(statistics.active == 0 && statistics.queued == 0 && statistics.dropped == 0)
    }

    @Test("submit returns while the hooks are still blocked, with the rest queued")
    func submitDoesNotWait() async throws {
        let directory = try TemporaryDirectory("hooks-fast")
        defer { directory.remove() }
        let gate = directory.path + "/gate"
        let runner = HookRunner(
            command: ["/bin/sh", "-c", #"while [ ! -e "$0" ]; do sleep 0.02; done"#, gate],
            timeout: .seconds(10), maxConcurrent: 2, maxQueued: 64)

        for index in 0..<50 { runner.submit(Data("{\"n\":\(index)}".utf8)) }
        let statistics = runner.statistics
        #expect(statistics.active == 2 && statistics.queued == 48 && statistics.started == 2)
        #expect(statistics.succeeded == 0 && statistics.dropped == 0)

        HookFixture.touch(gate)
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        #expect(runner.statistics.succeeded == 50)
    }

    @Test("A flood beyond maxQueued drops the oldest queued events and counts them")
    func floodDropsOldest() async throws {
        let directory = try TemporaryDirectory("hooks-flood")
        defer { directory.remove() }
        let gate = directory.path + "/gate"
        let output = directory.path + "/events"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let script = #"while [ ! -e "$0" ]; do sleep 0.02; done; "# + Self.recordStdin
        let runner = HookRunner(command: ["/bin/sh", "-c", script, gate, output], timeout: .seconds(5), maxConcurrent: 1, maxQueued: 3)

        for index in 0..<10 { runner.submit(Data("{\"n\":\(index)}".utf8)) }
        let statistics = runner.statistics
        #expect(statistics.dropped == 10 - 1 - 3)
        #expect(statistics.active == 1 && statistics.queued == 3)

        HookFixture.touch(gate)
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        #expect(runner.statistics.succeeded == 4 && runner.statistics.started == 4)
        let ran = Set(try HookFixture.fileContents(in: output).map { String(decoding: $0, as: UTF8.self) })
        #expect(ran == Set([0, 7, 8, 9].map { "{\"n\":\($0)}" }))
    }

    /// The queue's bytes are bounded as well as its count: ten events of 400 bytes behind a
    /// blocked hook, with room for `budget` bytes. At the budget both newest stay; one byte
    /// short, the older of them goes too.
    @Test("Queued stdin bytes are bounded: the oldest go first, the newest always stays", arguments: [800, 799])
    func queueBytesBounded(budget: Int) async throws {
        let directory = try TemporaryDirectory("hooks-bytes")
        defer { directory.remove() }
        let gate = directory.path + "/gate"
        let output = directory.path + "/events"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let script = #"while [ ! -e "$0" ]; do sleep 0.02; done; "# + Self.recordStdin
        let runner = HookRunner(
            command: ["/bin/sh", "-c", script, gate, output], timeout: .seconds(5), maxConcurrent: 1, maxQueued: 64, maxQueuedBytes: budget)
        let events = (0..<10).map { index in
            let json = "{\"n\":\(index)}"
            return Data((json + String(repeating: " ", count: 400 - json.utf8.count)).utf8)
        }
        #expect(events.allSatisfy { $0.count == 400 })
        for event in events { runner.submit(event) }
        let kept = budget >= 800 ? 2 : 1
        #expect(runner.statistics.queued == kept && runner.statistics.dropped == 9 - kept)
        #expect(runner.statistics.queuedBytes == 400 * kept)

        HookFixture.touch(gate)
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        let ran = Set(try HookFixture.fileContents(in: output))
        #expect(ran == Set([events[0]] + events.suffix(kept)))
        #expect(runner.statistics.queuedBytes == 0, "every byte counted in is counted out")
    }

    /// A run ends with its first process; what that left running is killed with the group,
    /// not left to pile up one process per notification.
    @Test("What a hook starts in the background is killed when the hook exits")
    func backgroundKilledAtExit() async throws {
        let directory = try TemporaryDirectory("hooks-background")
        defer { directory.remove() }
        let pidFile = directory.path + "/child.pid"
        let log = ResultLog()
        let runner = HookRunner(
            command: ["/bin/sh", "-c", #"sleep 300 > /dev/null 2>&1 & echo $! > "$0""#, pidFile],
            timeout: .seconds(30), onResult: log.append)

        runner.submit(Data("{}".utf8))
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        #expect(log.all.first?.exitStatus == 0, "the hook itself exited normally")
        let pidText = try String(contentsOfFile: pidFile, encoding: .utf8)
        let child = try #require(pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { if !HookFixture.processIsGone(child) { kill(child, SIGKILL) } }
        #expect(await HookFixture.eventually { HookFixture.processIsGone(child) })
    }

    /// systemd's notify socket and watchdog are the daemon's alone: a hook that inherited them
    /// could report a hung daemon alive (with `NotifyAccess=all`).
    @Test("The hook's environment has no systemd notify or watchdog variables")
    func noSystemdVariables() {
        let daemon = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1", "LISTEN_FDS": "1", "PATH": "/usr/bin"]
        let environment = ChildProcess.environment(adding: ["ADDED": "yes"], to: daemon)
        #expect(environment == ["PATH": "/usr/bin", "ADDED": "yes"])
    }

    @Test("A hook past its timeout is terminated together with its children")
    func timeoutKillsProcessGroup() async throws {
        let directory = try TemporaryDirectory("hooks-timeout")
        defer { directory.remove() }
        let pidFile = directory.path + "/child.pid"
        let log = ResultLog()
        let runner = HookRunner(
            command: ["/bin/sh", "-c", #"sleep 30 & echo $! > "$0"; wait"#, pidFile],
            timeout: .milliseconds(300), onResult: log.append)

        runner.submit(Data("{}".utf8))
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        let result = try #require(log.all.first)
        #expect(result.timedOut && !result.stopped && result.exitStatus == nil && result.signal == SIGTERM)
        #expect(runner.statistics.timedOut == 1 && runner.statistics.failed == 0)
        let pidText = try String(contentsOfFile: pidFile, encoding: .utf8)
        let child = try #require(pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await HookFixture.eventually { HookFixture.processIsGone(child) })
    }

    @Test("A hook that ignores SIGTERM is killed after the grace period")
    func stubbornHookGetsKilled() async throws {
        let directory = try TemporaryDirectory("hooks-kill")
        defer { directory.remove() }
        let pidFile = directory.path + "/child.pid"
        let log = ResultLog()
        let runner = HookRunner(
            command: ["/bin/sh", "-c", #"trap "" TERM; sleep 30 & echo $! > "$0"; wait"#, pidFile],
            timeout: .milliseconds(200), killGrace: .milliseconds(300), onResult: log.append)

        runner.submit(Data("{}".utf8))
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        let result = try #require(log.all.first)
        #expect(result.timedOut && result.signal == SIGKILL)
        let pidText = try String(contentsOfFile: pidFile, encoding: .utf8)
        let child = try #require(pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await HookFixture.eventually { HookFixture.processIsGone(child) })
    }

    @Test("A missing executable is reported as a launch error, by path or by name")
    func missingExecutable() async throws {
        let log = ResultLog()
        let byPath = HookRunner(command: ["/nonexistent/notifbridge-hook"], timeout: .seconds(1), onResult: log.append)
        let byName = HookRunner(command: ["notifbridge-no-such-hook-\(UUID().uuidString)"], timeout: .seconds(1), onResult: log.append)
        byPath.submit(Data("{}".utf8))
        byName.submit(Data("{}".utf8))

        #expect(await byPath.waitUntilIdle(timeout: Self.settle))
        #expect(await byName.waitUntilIdle(timeout: Self.settle))
        #expect(log.all.count == 2)
        #expect(log.all.allSatisfy { $0.launchError != nil && $0.exitStatus == nil && !$0.succeeded })
        #expect(byPath.statistics.failed == 1 && byName.statistics.failed == 1)
    }

    /// All three used to be reported as "No such file or directory".
    @Test("A program that is there but cannot run says why: a directory, no execute bit, a missing interpreter", arguments: [
        ("directory", "it is a directory, not a program"),
        ("not executable", "it is not executable (chmod +x PATH)"),
        ("bad interpreter", "its interpreter /nonexistent/interpreter (the #! line) cannot be run"),
    ])
    func notRunnable(_ kind: String, reason: String) async throws {
        let directory = try TemporaryDirectory("hook-not-runnable")
        defer { directory.remove() }
        let path = directory.path + "/hook"
        switch kind {
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "not executable":
            #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\nexit 0\n".utf8), attributes: [.posixPermissions: 0o644]))
        default:
            #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/nonexistent/interpreter -x\nexit 0\n".utf8), attributes: [.posixPermissions: 0o755]))
        }
        let log = ResultLog()
        let runner = HookRunner(command: [path], timeout: .seconds(1), onResult: log.append)
        runner.submit(Data("{}".utf8))
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        #expect(log.all.first?.launchError == "\(path): " + reason.replacingOccurrences(of: "PATH", with: path))
    }

    @Test("Hooks that skip stdin, exit non-zero or die by a signal are reported as such")
    func exitStatuses() async throws {
        let large = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        let cases: [(script: String, exitStatus: Int32?, signal: Int32?)] = [
            ("exit 0", 0, nil),
            ("exit 3", 3, nil),
            ("kill -USR1 $$", nil, SIGUSR1),
        ]
        for entry in cases {
            let log = ResultLog()
            let runner = HookRunner(command: ["/bin/sh", "-c", entry.script], timeout: .seconds(5), onResult: log.append)
            runner.submit(large)
            #expect(await runner.waitUntilIdle(timeout: Self.settle))
            let result = try #require(log.all.first)
            #expect(result.exitStatus == entry.exitStatus && result.signal == entry.signal, "\(entry.script)")
            #expect(!result.timedOut && result.launchError == nil)
            #expect(runner.statistics.succeeded == (entry.exitStatus == 0 ? 1 : 0))
        }
    }

    @Test("Output from stdout and stderr is captured up to the cap; environment additions arrive")
    func outputAndEnvironment() async throws {
        let log = ResultLog()
        let short = HookRunner(
            command: ["sh", "-c", #"echo "out $NB_HOOK_TEST"; echo err >&2"#], timeout: .seconds(5),
            environment: ["NB_HOOK_TEST": "value with spaces"], onResult: log.append)
        short.submit(Data())
        #expect(await short.waitUntilIdle(timeout: Self.settle))
        #expect(log.all.first?.output == "out value with spaces\nerr\n")

        let flood = ResultLog()
        let long = HookRunner(command: ["/bin/sh", "-c", #"head -c 200000 /dev/zero | tr "\0" x"#], timeout: .seconds(5), onResult: flood.append)
        long.submit(Data())
        #expect(await long.waitUntilIdle(timeout: Self.settle))
        let result = try #require(flood.all.first)
        #expect(result.exitStatus == 0)
        #expect(result.output == String(repeating: "x", count: HookRunner.outputLimit) + "…")
    }

    @Test("shutdown terminates running hooks, drops the queue and refuses new events")
    func shutdownKills() async throws {
        let log = ResultLog()
        // The children outlast any stall of this test's task (one of 30 s was seen in a full
        // parallel run on a loaded 2-core machine): only the shutdown can end them.
        let runner = HookRunner(command: ["/bin/sh", "-c", "sleep 600"], timeout: .seconds(600), maxConcurrent: 2, onResult: log.append)
        for _ in 0..<3 { runner.submit(Data("{}".utf8)) }
        #expect(runner.statistics.active == 2 && runner.statistics.queued == 1)
        #expect(await runner.waitUntilIdle(timeout: .milliseconds(100)) == false)

        runner.shutdown()
        #expect(await runner.waitUntilIdle(timeout: Self.settle))
        runner.submit(Data("{}".utf8))
        let statistics = runner.statistics
        #expect(statistics.started == 2 && statistics.stopped == 2 && statistics.failed == 0 && statistics.timedOut == 0)
        #expect(statistics.dropped == 2 && statistics.queued == 0 && statistics.active == 0)
        #expect(log.all.count == 2 && log.all.allSatisfy { $0.signal == SIGTERM && !$0.timedOut && $0.stopped })
    }

    @Test("The bounded queue evicts oldest first and keeps FIFO order")
    func boundedQueue() {
        var queue = BoundedQueue<Int>(capacity: 3)
        let evictions = (0..<10).map { queue.append($0) }
        #expect(evictions == [false, false, false] + Array(repeating: true, count: 7))
        #expect(queue.count == 3)
        #expect([queue.popFirst(), queue.popFirst(), queue.popFirst(), queue.popFirst()] == [7, 8, 9, nil])
        var none = BoundedQueue<Int>(capacity: 0)
        #expect(none.append(1) && none.count == 0)
    }
}
