import Foundation

/// Shows a freedesktop notification per alert by running `notify-send`, which talks to
/// org.freedesktop.Notifications on the session bus. Everything is passed as argv, never
/// through a shell, and options end at "--", so notification text can't act as a command or
/// an option. Runs share the hook machinery: bounded queue, timeout, never blocking the caller.
public struct DesktopNotifier: Sendable {
    public enum Urgency: String, Sendable, CaseIterable {
        case low, normal, critical
    }

    /// The resolved path of the notify-send executable.
    public let executable: String
    private let pool: SubprocessPool

    /// Returns nil when `executable` (a path, or a name looked up on PATH) is not an executable
    /// file, so callers can simply skip desktop notifications on headless systems.
    public init?(
        executable: String = "notify-send", timeout: Duration = .seconds(5),
        onResult: @escaping @Sendable (HookResult) -> Void = { _ in }
    ) {
        let environment = ChildProcess.environment(adding: [:])
        let searchPath = ProcessInfo.processInfo.environment["PATH"]
        guard let resolved = ChildProcess.resolve(executable, searchPath: searchPath) else { return nil }
        self.executable = resolved
        pool = SubprocessPool(
            configuration: .init(
                maxConcurrent: 2, maxQueued: 16,
                limits: .init(timeout: timeout, killGrace: .seconds(1), outputLimit: HookRunner.outputLimit),
                environment: environment),
            onResult: onResult)
    }

    /// Queues one notification; returns at once. `expireTimeout` nil leaves it to the server;
    /// zero asks the server to keep it until dismissed (the freedesktop meaning of 0).
    public func notify(
        appName: String, summary: String, body: String, urgency: Urgency = .normal,
        expireTimeout: Duration? = nil
    ) {
        let arguments = Self.arguments(
            appName: appName, summary: summary, body: body, urgency: urgency, expireTimeout: expireTimeout)
        pool.submit(SubprocessJob(arguments: [executable] + arguments, input: nil))
    }

    /// The argv after the program name. notify-send runs the body (not the summary) through
    /// g_strcompress, so its backslashes are doubled to be shown as written. NUL characters,
    /// which cannot travel in argv, are removed.
    static func arguments(
        appName: String, summary: String, body: String, urgency: Urgency, expireTimeout: Duration?
    ) -> [String] {
        func clean(_ text: String) -> String { text.replacingOccurrences(of: "\0", with: "") }
        var arguments = ["--app-name=\(clean(appName))", "--urgency=\(urgency.rawValue)"]
        if let expireTimeout {
            let (seconds, attoseconds) = max(expireTimeout, .zero).components
            let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
            arguments.append("--expire-time=\(Int32(clamping: milliseconds))")
        }
        arguments += ["--", clean(summary)]
        if !body.isEmpty { arguments.append(clean(body).replacingOccurrences(of: "\\", with: "\\\\")) }
        return arguments
    }

    public var statistics: HookStatistics { pool.statistics }

    public func waitUntilIdle(timeout: Duration) async -> Bool {
        await pool.waitUntilIdle(timeout: timeout)
    }

    /// Drops queued notifications and stops any notify-send still running.
    public func shutdown() {
        pool.shutdown()
    }
}
