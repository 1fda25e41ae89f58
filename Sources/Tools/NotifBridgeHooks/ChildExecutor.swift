import Foundation
import Glibc
import Synchronization

/// The one thread that every child's supervision runs on, as the task executor preference of
/// the tasks `SubprocessPool` and `Command` start. Deadlines are then kept whatever else the
/// process does: a busy or blocked global executor (NIO's event loops in `notifbridge`, two
/// threads on a two-core machine) cannot hold up a SIGTERM, and supervision never takes time
/// from those loops. Supervision only awaits (the library reads without blocking, spawns on its
/// own worker thread and watches exits on another), so one thread serves any number of children.
///
/// One step still needs the global executor: swift-subprocess finishes every run with an
/// unstructured `Task` (its `withUncancelledTask`), which inherits priority but not the executor
/// preference. Runs therefore start at high priority, so that step is not queued behind
/// CPU-bound work of default priority (in the full test run, several seconds of it).
final class ChildExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ChildExecutor()

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    /// The thread's pthread_t, once it runs.
    private let thread = Atomic<UInt>(0)

    private init() {
        Thread { [self] in runJobs() }.start()
    }

    /// True on the executor's thread: what a test checks, since thread names are unreliable.
    var isCurrent: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
