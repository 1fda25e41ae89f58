import NIOCore

/// Runs a task's jobs on one event loop: the loop that owns a connection's socket, so the
/// connection's task, its timers and its socket share a thread (and that core's caches).
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// Immutable; event loops are thread-safe.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
