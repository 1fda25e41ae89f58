import Foundation

/// How one child process ended, with its output as bytes.
public struct CommandResult: Sendable, Equatable {
    /// The exit code, or nil when the child was killed by a signal or never started.
    public var exitStatus: Int32?
    /// The signal that ended the child (SIGTERM/SIGKILL after a timeout or cancellation, or a crash).
    public var signal: Int32?
    /// True when the child outlived its timeout and its process group was terminated.
    public var timedOut: Bool
    public var duration: Duration
    /// What the child wrote, cut at the caller's output limit.
    public var output: [UInt8]
    /// The child wrote more than the output limit; the rest was read and dropped.
    public var outputTruncated: Bool
    /// Why the child could not be started (missing executable, permissions); nil if it ran.
    public var launchError: String?
    /// The caller's stop (a shutdown, a cancellation) terminated the child: no failure of its own.
    public var stopped: Bool

    public init(
        exitStatus: Int32?, signal: Int32? = nil, timedOut: Bool, duration: Duration, output: [UInt8], outputTruncated: Bool = false,
        launchError: String? = nil, stopped: Bool = false
    ) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.duration = duration
        self.output = output
        self.outputTruncated = outputTruncated
        self.launchError = launchError
        self.stopped = stopped
    }
}

/// Runs one command to completion for a caller that uses what it prints, such as the simulated
/// iPhone's notification service extension. It is the hooks' machinery (own process group,
/// SIGTERM then SIGKILL to the group at the timeout, bounded output), except that only standard
/// output is captured: standard error goes to this process's, so diagnostics never corrupt it.
public enum Command {
    /// The child runs in an unstructured task, which does not inherit cancellation, so the caller's cancellation reaches it only as a
    /// stop: SIGTERM to its group, then SIGKILL after `killGrace`, as at a timeout (but not
    /// reported as one). The caller's thread is never blocked; see `ChildExecutor`.
    public static func run(
        _ arguments: [String], input: Data, timeout: Duration, killGrace: Duration, outputLimit: Int,
        environment: [String: String] = [:]
    ) async -> CommandResult {
        let stop = StopSignal()
        let limits = ChildProcess.Limits(timeout: timeout, killGrace: killGrace, outputLimit: outputLimit)
        let childEnvironment = ChildProcess.environment(adding: environment)
        let run = Task(executorPreference: ChildExecutor.shared, priority: .high) {
            await ChildProcess.run(
                arguments, input: input, environment: childEnvironment, limits: limits,
                standardError: .inherited, stop: stop)
        }
        return await withTaskCancellationHandler {
            await run.value
        } onCancel: {
            stop.stop()
        }
    }
}
