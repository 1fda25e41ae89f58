import ServiceLifecycle

/// Runs `pass` every `interval` until the service group shuts down gracefully or the task is
/// cancelled: a service asleep between passes would otherwise hold up the relay's shutdown.
/// - Parameter startingNow: the first pass runs at once rather than after one interval.
func repeatUntilShutdown(every interval: Duration, startingNow: Bool = false, _ pass: @escaping @Sendable () async -> Void) async throws {
    do {
        try await cancelWhenGracefulShutdown {
            if startingNow { await pass() }
            while true {
                try await Task.sleep(for: interval)
                await pass()
            }
        }
    } catch is CancellationError {
        return
    }
}
