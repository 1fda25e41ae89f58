import CSystemdBus
import Glibc
import Synchronization

/// Work for the bus thread. It receives nil when the connection closed before the job could
/// run, and must then complete whatever waits on it with `.closed`.
typealias BusJob = @Sendable (BusLoop?) -> Void

/// Told why a connection ended that nobody closed.
public typealias DBusLossHandler = @Sendable (DBusError) -> Void

/// The part of a connection that any thread may touch: a queue of jobs for the bus thread and
/// the eventfd that wakes that thread from `poll`. Nothing here calls sd-bus.
final class BusCore: Sendable {
    private struct State {
        var jobs: [BusJob] = []
        var closeRequested = false
        /// Set once by the bus thread at teardown; from then on jobs are refused.
        var finished = false
        /// Why the connection ended without a close: the bus daemon went away or dropped it.
        var loss: DBusError?
        var lossHandlers: [DBusLossHandler] = []
    }

    private let state = Mutex(State())
    /// Written only while the lock is held and before `finished`, so it is never written after
    /// the bus thread closes it.
    let wakeFD: Int32

    init() throws(DBusError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw .system(operation: "eventfd", errno: errno) }
        wakeFD = fd
    }

    /// Queues `job` for the bus thread, or runs it right here with nil if the connection is
    /// closing or closed.
    func submit(_ job: @escaping BusJob) {
        let accepted = state.withLock { state in
            guard !state.closeRequested, !state.finished else { return false }
            state.jobs.append(job)
            wake()
            return true
        }
        if !accepted { job(nil) }
    }

    /// Asks the bus thread to finish queued jobs, then tear down. Safe from any thread,
    /// including the bus thread itself, and more than once.
    func requestClose() {
        state.withLock { state in
            guard !state.closeRequested, !state.finished else { return }
            state.closeRequested = true
            // A close is no loss: the handlers (and what they hold) can go.
            state.lossHandlers = []
            wake()
        }
    }

    var isClosed: Bool {
        state.withLock { $0.closeRequested || $0.finished }
    }

    /// Bus thread: the queued jobs, and whether a close was requested after them.
    func takeJobs() -> (jobs: [BusJob], closeRequested: Bool) {
        state.withLock { state in
            defer { state.jobs = [] }
            return (state.jobs, state.closeRequested)
        }
    }

    /// Bus thread, at teardown: refuses further jobs, closes the eventfd, and hands back any
    /// jobs still queued so they can be failed.
    func finish() -> [BusJob] {
        state.withLock { state in
            guard !state.finished else { return [] }
            state.finished = true
            close(wakeFD)
            defer { state.jobs = [] }
            return state.jobs
        }
    }

    /// Calls `handler` once if the connection is lost, at once if it already was; never if it
    /// was closed on request.
    func onLoss(_ handler: @escaping DBusLossHandler) {
        let loss: DBusError? = state.withLock { state in
            if let loss = state.loss { return loss }
            if !state.closeRequested, !state.finished { state.lossHandlers.append(handler) }
            return nil
        }
        if let loss { handler(loss) }
    }

    /// Bus thread, at teardown: records `reason` as a loss unless a close was requested, and
    /// hands back the handlers to tell.
    func lost(_ reason: DBusError) -> [DBusLossHandler] {
        state.withLock { state in
            guard !state.closeRequested, state.loss == nil else { return [] }
            state.loss = reason
            defer { state.lossHandlers = [] }
            return state.lossHandlers
        }
    }

    /// Bus thread: clears the eventfd counter after `poll` reported it readable.
    func drainWakeups() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, MemoryLayout<UInt64>.size)
    }

    /// Caller holds the lock. A full counter (EAGAIN) still leaves the fd readable, which is
    /// all the bus thread needs.
    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }
}
