import Foundation
import NotifBridgeHooks
import NotifBridgeHostCore

/// Plays an app's notification service extension with a shell command: `/bin/sh -c COMMAND`,
/// the APNs payload (exactly as received) on standard input, and a `ServiceExtension.Rewrite`
/// JSON object expected on standard output within the deadline. Standard error passes through
/// to ours. At the deadline the command's whole process group gets SIGTERM, then SIGKILL; what
/// it leaves running when its shell exits is killed then.
public struct ServiceExtensionRunner: Sendable {
    public static let shell = "/bin/sh"
    /// Between SIGTERM at the deadline and SIGKILL, for a command that ignores SIGTERM.
    public static let killGrace = Duration.milliseconds(500)

    public var command: String
    public var deadline: Duration

    public init(command: String, deadline: Duration = ServiceExtension.defaultDeadline) {
        self.command = command
        self.deadline = deadline
    }

    /// What iOS would forward for `mapped`. The command runs only for `mutable-content: 1`.
    public func process(_ mapped: APNsPayload.Mapped, payload: Data) async -> (APNsPayload.Mapped, ServiceExtension.Outcome) {
        guard ServiceExtension.runs(for: mapped) else { return (mapped, .notRun) }
        let result = await Command.run(
            [Self.shell, "-c", command], input: payload, timeout: deadline, killGrace: Self.killGrace,
            outputLimit: ServiceExtension.maxOutputLength)
        return ServiceExtension.resolve(mapped, completion: Self.completion(result, deadline: deadline))
    }

    static func completion(_ result: CommandResult, deadline: Duration) -> ServiceExtension.Completion {
        if let launchError = result.launchError { return .failed(launchError) }
        if result.timedOut { return .timedOut(after: deadline) }
        if let status = result.exitStatus { return .exited(status: status, output: result.output, outputTruncated: result.outputTruncated) }
        if let signal = result.signal { return .signalled(signal) }
        return .failed("its exit status was lost (reaped elsewhere)")
    }
}
