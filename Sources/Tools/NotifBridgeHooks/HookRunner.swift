import Foundation

/// Runs a user command once per event, with the event's JSON on stdin, without ever making the
/// caller wait: the notification pipeline submits and moves on, whatever the hook does.
///
/// The command is an argv, never a shell line; write `["/bin/sh", "-c", "…"]` to get a shell.
/// A first element without a slash is looked up on PATH (of the hook's environment) per run.
/// Each run gets its own process group, which is what a timeout or `shutdown()` signals, so
/// children of `sh -c` die with it. `onResult` is called on the runners' thread; keep it short.
public final class HookRunner: Sendable {
    public let command: [String]
    private let pool: SubprocessPool

    /// Bytes of combined stdout/stderr kept in `HookResult.output`.
    public static let outputLimit = 4096

    /// - Parameters:
    ///   - timeout: how long a run may take before SIGTERM; SIGKILL follows after `killGrace`.
    ///   - maxConcurrent: hooks running at once (at least 1).
    ///   - maxQueued: events waiting beyond those; when full the oldest is dropped and counted.
    ///   - maxQueuedBytes: the waiting events' JSON together; past it the oldest are dropped too.
    ///   - environment: variables added to (or overriding) this process's environment.
    public init(
        command: [String], timeout: Duration, maxConcurrent: Int = 2, maxQueued: Int = 64, maxQueuedBytes: Int = 4 << 20,
        environment: [String: String] = [:], killGrace: Duration = .seconds(1),
        onResult: @escaping @Sendable (HookResult) -> Void = { _ in }
    ) {
        self.command = command
        pool = SubprocessPool(
            configuration: .init(
                maxConcurrent: maxConcurrent, maxQueued: maxQueued, maxQueuedBytes: maxQueuedBytes,
                limits: .init(timeout: timeout, killGrace: killGrace, outputLimit: Self.outputLimit),
                environment: ChildProcess.environment(adding: environment)),
            onResult: onResult)
    }

    /// Queues one run with `json` as its stdin. Never blocks and never fails; problems arrive
    /// through `onResult` and `statistics` (a full queue drops its oldest events).
    public func submit(_ json: Data) {
        pool.submit(SubprocessJob(arguments: command, input: json))
    }

    public var statistics: HookStatistics { pool.statistics }

    /// True once nothing is running or queued and every result has been reported; false if
    /// `timeout` passed first.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        await pool.waitUntilIdle(timeout: timeout)
    }

    /// Drops queued events, terminates running hooks and refuses (drops) later submissions.
    /// Returns at once; follow with `waitUntilIdle` to wait for the hooks to be gone.
    public func shutdown() {
        pool.shutdown()
    }
}
