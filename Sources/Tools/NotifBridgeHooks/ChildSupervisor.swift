import Foundation
import Glibc

/// Feeds a spawned child its stdin, collects its output and enforces the timeout, all with
/// non-blocking descriptors on one thread: a hook that never reads stdin, floods its output or
/// hangs can stall only itself, and only until the deadline.
struct ChildSupervisor {
    let pid: pid_t
    private var inputFD: Int32
    private let input: Data
    private var written = 0
    private var outputFD: Int32
    private var output: [UInt8] = []
    private var truncated = false
    private let limits: Subprocess.Limits

    /// The leader's exit is noticed by polling, because SIGCHLD is process-wide and belongs to
    /// the host program; the interval backs off so quick hooks are seen within a millisecond.
    private static let maximumTick = Duration.milliseconds(25)

    init(pid: pid_t, inputFD: Int32, input: Data, outputFD: Int32, limits: Subprocess.Limits) {
        self.pid = pid
        self.inputFD = inputFD
        self.input = input
        self.outputFD = outputFD
        self.limits = limits
        for fd in [inputFD, outputFD] where fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
    }

    mutating func run(start: ContinuousClock.Instant, cancelled: () -> Bool) -> CommandResult {
        let clock = ContinuousClock()
        let deadline = start + limits.timeout
        var terminatedAt: ContinuousClock.Instant?
        var killed = false
        var timedOut = false
        var tick = Duration.milliseconds(1)
        pumpInput()
        while case .running = exitState() {
            let now = clock.now
            if terminatedAt == nil, now >= deadline || cancelled() {
                timedOut = now >= deadline
                kill(-pid, SIGTERM)
                terminatedAt = now
            }
            var wait = tick
            if let terminatedAt {
                if !killed, now >= terminatedAt + limits.killGrace {
                    kill(-pid, SIGKILL)
                    killed = true
                }
                if !killed { wait = min(wait, terminatedAt + limits.killGrace - now) }
            } else {
                wait = min(wait, deadline - now)
            }
            waitForDescriptors(wait)
            tick = min(tick * 2, Self.maximumTick)
            pumpInput()
            pumpOutput()
        }
        pumpOutput()
        // The unreaped leader keeps the group id reserved, so this cannot hit a recycled group.
        if terminatedAt != nil { kill(-pid, SIGKILL) }
        let status = reap()
        closeDescriptors()

        return CommandResult(
            exitStatus: status?.exitStatus, signal: status?.signal, timedOut: timedOut,
            duration: clock.now - start, output: output, outputTruncated: truncated)
    }

    private enum ExitState { case running, exited, lost }

    /// WNOWAIT leaves the zombie in place until `reap`, after the group has been cleaned up.
    private func exitState() -> ExitState {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 {
            if errno != EINTR { return .lost }  // ECHILD: someone else reaped it
        }
        return info._sifields._sigchld.si_pid == pid ? .exited : .running
    }

    private func reap() -> (exitStatus: Int32?, signal: Int32?)? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        let low = status & 0x7f
        if low == 0 { return ((status >> 8) & 0xff, nil) }
        return (nil, low)
    }

    private func waitForDescriptors(_ timeout: Duration) {
        var fds: [pollfd] = []
        if inputFD >= 0 { fds.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0)) }
        if outputFD >= 0 { fds.append(pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)) }
        let (seconds, attoseconds) = max(timeout, .zero).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        _ = poll(&fds, nfds_t(fds.count), Int32(clamping: milliseconds))
    }

    private mutating func pumpInput() {
        guard inputFD >= 0 else { return }
        while written < input.count {
            let count = input.withUnsafeBytes { bytes in
                write(inputFD, bytes.baseAddress! + written, bytes.count - written)
            }
            if count > 0 {
                written += count
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                break  // EPIPE: the hook closed stdin or exited without reading it all; its choice.
            }
        }
        close(inputFD)
        inputFD = -1
    }

    /// Reads at most 64 KiB per call so a hook flooding its output can't starve the deadline check.
    private mutating func pumpOutput() {
        guard outputFD >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { read(outputFD, $0.baseAddress, $0.count) }
            if count > 0 {
                let room = max(0, limits.outputLimit - output.count)
                output.append(contentsOf: buffer.prefix(min(count, room)))
                if count > room { truncated = true }
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                close(outputFD)  // end of file: every writer, grandchildren included, is done
                outputFD = -1
                return
            }
        }
    }

    private mutating func closeDescriptors() {
        for fd in [inputFD, outputFD] where fd >= 0 { close(fd) }
        inputFD = -1
        outputFD = -1
    }
}
