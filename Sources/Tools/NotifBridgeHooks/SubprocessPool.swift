import Foundation
import Synchronization

/// One command line to run, with optional bytes for its stdin (nil means /dev/null).
struct SubprocessJob: Sendable {
    var arguments: [String]
    var input: Data?

    var inputBytes: Int { input?.count ?? 0 }
}

/// Runs jobs in at most `maxConcurrent` tasks with a bounded FIFO in front. `submit` only takes
/// a lock and, at most, starts a task, so callers never wait on a child. The tasks run on
/// `ChildExecutor`'s thread, never on the global executor (NIO's loops in `notifbridge`).
final class SubprocessPool: Sendable {
    struct Configuration: Sendable {
        var maxConcurrent: Int
        var maxQueued: Int
        /// Stdin bytes the queue may hold; past it the oldest jobs go. The count alone let a
        /// queue of large events (a body near the message limit, its controls escaped six-fold
        /// in JSON) hold about a hundred megabytes.
        var maxQueuedBytes: Int = 4 << 20
        var limits: ChildProcess.Limits
        /// The complete child environment.
        var environment: [String: String]
    }

    private struct State {
        var queue: BoundedQueue<SubprocessJob>
        var queuedBytes = 0
        var statistics = HookStatistics()
        var stopped = false

        /// Drops the oldest queued job.
        mutating func dropOldest() {
            guard let oldest = queue.popFirst() else { return }
            queuedBytes -= oldest.inputBytes
            statistics.dropped += 1
        }
    }

    private let configuration: Configuration
    private let onResult: @Sendable (HookResult) -> Void
    private let state: Mutex<State>
    /// Wakes every running supervisor at `shutdown()`.
    private let stopping = StopSignal()

    init(configuration: Configuration, onResult: @escaping @Sendable (HookResult) -> Void) {
        precondition(configuration.maxConcurrent >= 1, "maxConcurrent must be at least 1")
        precondition(configuration.maxQueued >= 0, "maxQueued must not be negative")
        self.configuration = configuration
        self.onResult = onResult
        state = Mutex(State(queue: BoundedQueue(capacity: configuration.maxQueued)))
    }

    func submit(_ job: SubprocessJob) {
        let startNow = state.withLock { state -> Bool in
            if state.stopped {
                state.statistics.dropped += 1
                return false
            }
            if state.statistics.active < configuration.maxConcurrent {
                state.statistics.active += 1
                state.statistics.started += 1
                return true
            }
            guard configuration.maxQueued > 0 else {
                state.statistics.dropped += 1
                return false
            }
            if state.queue.count == configuration.maxQueued { state.dropOldest() }
            _ = state.queue.append(job)
            state.queuedBytes += job.inputBytes
            // The newest stays, even alone over the budget: it is what the person is waiting for.
            while state.queuedBytes > configuration.maxQueuedBytes, state.queue.count > 1 { state.dropOldest() }
            return false
        }
        // Never cancelled: `shutdown()` stops children through `stopping` (see ChildSupervisor).
        // The executor and the priority: see ChildExecutor.
        if startNow { Task(executorPreference: ChildExecutor.shared, priority: .high) { await self.work(startingWith: job) } }
    }

    var statistics: HookStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queued = state.queue.count
            statistics.queuedBytes = state.queuedBytes
            return statistics
        }
    }

    var isIdle: Bool {
        state.withLock { $0.statistics.active == 0 && $0.queue.count == 0 }
    }

    /// Polls rather than registering continuations: it serves tests and shutdown, not the hot path.
    func waitUntilIdle(timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !isIdle {
            guard clock.now < deadline else { return false }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                return isIdle
            }
        }
        return true
    }

    /// Drops queued jobs and terminates running children (SIGTERM, then SIGKILL after the grace).
    func shutdown() {
        state.withLock { state in
            state.stopped = true
            state.statistics.dropped += state.queue.count
            state.queue.removeAll()
            state.queuedBytes = 0
        }
        stopping.stop()
    }

    private func work(startingWith first: SubprocessJob) async {
        var job = first
        while true {
            let result = HookResult(await ChildProcess.run(
                job.arguments, input: job.input, environment: configuration.environment,
                limits: configuration.limits, stop: stopping))
            state.withLock { state in
                if result.timedOut {
                    state.statistics.timedOut += 1
                } else if result.stopped {
                    state.statistics.stopped += 1
                } else if result.succeeded {
                    state.statistics.succeeded += 1
                } else {
                    state.statistics.failed += 1
                }
            }
            // Still counted as active here, so waitUntilIdle implies every result was delivered.
            onResult(result)
            let next = state.withLock { state -> SubprocessJob? in
                if let next = state.queue.popFirst() {
                    state.queuedBytes -= next.inputBytes
                    state.statistics.started += 1
                    return next
                }
                state.statistics.active -= 1
                return nil
            }
            guard let next else { return }
            job = next
        }
    }
}

/// A FIFO that evicts its oldest element when full, so a flood costs bounded memory.
struct BoundedQueue<Element> {
    let capacity: Int
    private var items: [Element] = []
    private var head = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { items.count - head }

    /// Returns true when an element was discarded: the oldest, or the new one if capacity is 0.
    mutating func append(_ element: Element) -> Bool {
        guard capacity > 0 else { return true }
        let evicting = count == capacity
        items.append(element)
        if evicting { advance() }
        return evicting
    }

    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        advance()
        return element
    }

    mutating func removeAll() {
        items.removeAll()
        head = 0
    }

    /// Compacts once the consumed prefix is at least half the array: amortised O(1), and at
    /// most `capacity` stale elements are retained.
    private mutating func advance() {
        head += 1
        if head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
