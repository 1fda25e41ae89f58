import Foundation
import Synchronization

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

    public init(exitStatus: Int32?, signal: Int32? = nil, timedOut: Bool, duration: Duration, output: [UInt8], outputTruncated: Bool = false, launchError: String? = nil) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.duration = duration
        self.output = output
        self.outputTruncated = outputTruncated
        self.launchError = launchError
    }
}

/// Runs one command to completion for a caller that uses what it prints, such as the simulated
/// iPhone's notification service extension. It is the hooks' machinery (own process group,
/// SIGTERM then SIGKILL to the group at the timeout, bounded output), except that only standard
/// output is captured: standard error goes to this process's, so diagnostics never corrupt it.
public enum Command {
    /// Runs on a dedicated thread, so a slow child never holds a cooperative-pool thread.
    /// Cancelling the task terminates the child's group the way a timeout does.
    public static func run(
        _ arguments: [String], input: Data, timeout: Duration, killGrace: Duration, outputLimit: Int,
        environment: [String: String] = [:]
    ) async -> CommandResult {
        let cancelled = CancelFlag()
        let limits = Subprocess.Limits(timeout: timeout, killGrace: killGrace, outputLimit: outputLimit)
        let childEnvironment = SubprocessPool.environment(adding: environment)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CommandResult, Never>) in
                let thread = Thread {
                    continuation.resume(returning: Subprocess.run(
                        arguments, input: input, environment: childEnvironment, limits: limits,
                        standardError: .inherited, cancelled: { cancelled.isSet }))
                }
                thread.name = "notifbridge-command"
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    private final class CancelFlag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }
}
