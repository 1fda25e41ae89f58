import NIOCore

/// A connection's waits (the commit window, the tick), on its socket's event loop when it has
/// one. There `Task.sleep` would go through the runtime's timer thread and a worker that then
/// wakes the loop: about four thread wake-ups a notification more at 100/s
/// (`Benchmarks/load.sh` counts them).
enum ConnectionTimer {
    /// The event loop the current connection's task runs on, set by the link source that started
    /// the task there (TCP); nil for a link without one (Bluetooth, a test's link pair).
    @TaskLocal static var eventLoop: (any EventLoop)?

    /// Waits `duration` on the current connection's loop, or with `Task.sleep` without one.
    /// Throws `CancellationError` when the task is cancelled.
    static func sleep(for duration: Duration) async throws {
        guard let eventLoop else {
            try await Task.sleep(for: duration)
            return
        }
        try await sleep(for: duration, on: eventLoop)
    }

    /// Waits `duration` on `eventLoop`'s own timer.
    static func sleep(for duration: Duration, on eventLoop: any EventLoop) async throws {
        let timer = eventLoop.scheduleTask(in: TimeAmount(duration)) {}
        do {
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
        } catch EventLoopError.cancelled {
            throw CancellationError()
        }
    }
}
