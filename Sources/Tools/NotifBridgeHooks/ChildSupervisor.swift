import Glibc
import Subprocess
import Synchronization

/// The part of a run swift-subprocess leaves to its caller, done inside `run`'s body while the
/// leader is still unreaped: its process-group id stays reserved until the library reaps it
/// after the body returns, so every signal here reaches this child's group and no other.
///
/// - The deadline (or `stop`): SIGTERM to the group, SIGKILL to the group after the grace.
///   The library's `teardownSequence` would do that only for a cancelled task, and gives up
///   as soon as the leader exits, leaving grandchildren that ignore SIGTERM running.
/// - SIGKILL to the group once the leader is gone, however it ended: a run ends with its first
///   process, and what that left running (`sh -c 'player beep.wav &'`) would otherwise outlive
///   the run's timeout and its slot in the pool, one more process for each notification.
/// - The output cap: the first `outputLimit` bytes are kept and the rest read and dropped, so a
///   flood neither fails the run (as the library's `.bytes(limit:)` does) nor blocks the child.
///
/// The run must not be cancelled: the library would answer with its own teardown, and the
/// waits below would stop waiting. `Command` and `SubprocessPool` start it in an unstructured
/// task for that reason.
struct ChildSupervisor: Sendable {
    let limits: ChildProcess.Limits
    let start: ContinuousClock.Instant
    let stop: StopSignal

    struct Outcome: Sendable {
        var output: [UInt8] = []
        var truncated = false
        var timedOut = false
        /// `stop` ended the child.
        var stopped = false
    }

    /// The leader's exit is noticed by polling only when its output closed before it exited,
    /// which is rare; the interval backs off so quick exits are seen within a millisecond.
    private static let maximumTick = Duration.milliseconds(25)

    func supervise<I, E>(_ execution: Execution<I, SequenceOutput, E>) async -> Outcome {
        let pid = execution.processIdentifier.value
        var outcome = Outcome()
        let termination = await withTaskGroup(of: Termination.self) { group in
            group.addTask { await enforceDeadline(execution, pid: pid) }
            // Ends at end of file, or when the library sees the leader exit: a grandchild may hold
            // the pipe open, and the library then stops waiting for its end of file.
            do {
                for try await buffer in execution.standardOutput {
                    buffer.withUnsafeBytes { bytes in
                        let room = max(0, limits.outputLimit - outcome.output.count)
                        outcome.output.append(contentsOf: bytes.prefix(room))
                        if bytes.count > room { outcome.truncated = true }
                    }
                }
            } catch {
                // A read error ends the output; the exit status still tells how the child fared.
            }
            var tick = Duration.milliseconds(1)
            while !Self.leaderExited(pid) {
                try? await Task.sleep(for: tick)
                tick = min(tick * 2, Self.maximumTick)
            }
            group.cancelAll()
            return await group.next() ?? Termination()
        }
        try? execution.send(signal: .kill, toProcessGroup: true)
        outcome.timedOut = termination.timedOut
        outcome.stopped = termination.stopped
        return outcome
    }

    private struct Termination: Sendable {
        var signalled = false
        var timedOut = false
        var stopped = false
    }

    /// Waits for the deadline or `stop`, then terminates the group; returns early when
    /// cancelled because the leader has exited on its own.
    private func enforceDeadline<I, O, E>(_ execution: Execution<I, O, E>, pid: pid_t) async -> Termination {
        let deadline = start + limits.timeout
        let reason = await withTaskGroup(of: Reason.self) { group in
            group.addTask { (try? await Task.sleep(until: deadline, clock: .continuous)) == nil ? .cancelled : .deadline }
            group.addTask {
                await stop.wait()
                return Task.isCancelled ? .cancelled : .stopped
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
        guard reason != .cancelled, !Self.leaderExited(pid) else { return Termination() }
        try? execution.send(signal: .terminate, toProcessGroup: true)
        let termination = Termination(signalled: true, timedOut: reason == .deadline, stopped: reason == .stopped)
        guard (try? await Task.sleep(for: limits.killGrace)) != nil else { return termination }
        try? execution.send(signal: .kill, toProcessGroup: true)
        return termination
    }

    private enum Reason: Sendable { case deadline, stopped, cancelled }

    /// WNOWAIT leaves the zombie for the library to reap; ECHILD (reaped elsewhere) counts as exited.
    private static func leaderExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 {
            if errno != EINTR { return true }
        }
        return info._sifields._sigchld.si_pid == pid
    }
}

/// Asks running children to stop, as `shutdown()` and task cancellation do. Waiters wake at
/// once, with no polling; a waiter whose task is cancelled wakes too.
final class StopSignal: Sendable {
    private struct State {
        var stopped = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters cancelled before they parked, so they don't park at all.
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `stop()` has been called, or the calling task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked = state.withLock { state in
                    if state.stopped || state.cancelled.remove(id) != nil { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !parked { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                // Once stopped, every waiter is resumed or will not park: nothing to record.
                guard !state.stopped else { return CheckedContinuation<Void, Never>?.none }
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return CheckedContinuation<Void, Never>?.none
                }
                return waiter
            }
            waiter?.resume()
        }
    }
}
