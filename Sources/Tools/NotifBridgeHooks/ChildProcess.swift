import Foundation
import Glibc
import Subprocess
import SystemPackage

/// Starts one child with swift-subprocess and has `ChildSupervisor` watch it. Shared by
/// `HookRunner` and `Command` so both get the same process-group, timeout and output handling.
///
/// swift-subprocess does the spawning (its own process group, an empty signal mask, default
/// dispositions, no descriptors beyond 0–2), the non-blocking pipe reads and the reaping. What
/// it has no notion of is a deadline, a kill that reaches the group once the leader is gone,
/// or output cut at a limit without failing, so `ChildSupervisor` adds those.
enum ChildProcess {
    struct Limits: Sendable {
        var timeout: Duration
        /// Time between SIGTERM and SIGKILL.
        var killGrace: Duration
        /// Bytes of combined stdout/stderr kept for the result.
        var outputLimit: Int
    }

    /// Where the child's standard error goes: into the captured output (hooks show both), or to
    /// this process's standard error (callers that parse the output).
    enum StandardError: Sendable { case merged, inherited }

    /// Used when the environment has no PATH, like execvp's fallback minus the current directory.
    static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// Finds `name` the way execvp would, except that empty PATH entries (the current
    /// directory) are skipped: a daemon should not run whatever sits in its working directory.
    /// The library is always given the absolute result, so its own lookup (against this
    /// process's PATH when the child's has none) never applies.
    static func resolve(_ name: String, searchPath: String?) -> String? {
        guard !name.isEmpty else { return nil }
        if name.contains("/") { return isExecutableFile(name) ? name : nil }
        for directory in (searchPath ?? defaultSearchPath).split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    /// Merges `additions` over this process's environment, less what systemd handed this
    /// process alone: with `NotifyAccess=all` a hook could otherwise report READY or pet the
    /// watchdog for a daemon that hangs.
    static func environment(adding additions: [String: String], to base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        base
            .filter { key, _ in !inheritedOnlyBySelf.contains(key) && !key.hasPrefix("LISTEN_") }
            .merging(additions) { $1 }
    }

    /// systemd's variables for the service's main process.
    static let inheritedOnlyBySelf: Set<String> = ["NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC"]

    /// `environment` is the complete child environment. Returns once the child has exited and
    /// been reaped; `stop` ends it the way a timeout does, without counting as one. Must not be
    /// run in a task that can be cancelled (callers detach it): see `ChildSupervisor`.
    static func run(
        _ arguments: [String], input: Data?, environment: [String: String], limits: Limits,
        standardError: StandardError = .merged, stop: StopSignal
    ) async -> CommandResult {
        let clock = ContinuousClock()
        let start = clock.now
        func failure(_ message: String) -> CommandResult {
            CommandResult(exitStatus: nil, timedOut: false, duration: clock.now - start, output: [], launchError: message)
        }
        guard let name = arguments.first, !name.isEmpty else { return failure("empty command") }
        let path: String
        if name.contains("/") {
            path = name  // let posix_spawn report ENOENT/EACCES precisely
        } else {
            guard let found = resolve(name, searchPath: environment["PATH"]) else { return failure("\(name): not found on PATH") }
            path = found
        }
        let standardInput: FileDescriptor
        do {
            standardInput = try input.map(StandardInput.memoryFile) ?? StandardInput.null()
        } catch {
            return failure("stdin: \(error)")
        }
        defer { try? standardInput.close() }

        var options = PlatformOptions()
        options.processGroupID = 0  // its own group, so signals reach `sh -c` grandchildren too
        // Only a cancelled run would use it, and runs are never cancelled; it mirrors the supervisor.
        options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: limits.killGrace)]
        let configuration = Configuration(
            executable: .path(FilePath(path)),
            arguments: Arguments(Array(arguments.dropFirst())),
            environment: .custom(Dictionary(
                environment.compactMap { key, value in Environment.Key(rawValue: key).map { ($0, value) } },
                uniquingKeysWith: { $1 })),
            platformOptions: options)
        let supervisor = ChildSupervisor(limits: limits, start: start, stop: stop)

        // ETXTBSY: a script written moments ago is still open for writing in a child that another
        // thread forked and that has not reached exec yet. That clears within milliseconds.
        var delay = Duration.milliseconds(2)
        while true {
            do {
                let (status, outcome) = try await launch(configuration, standardInput, standardError, supervisor)
                let (exitStatus, signal): (Int32?, Int32?) = switch status {
                case .exited(let code): (code, nil)
                case .signaled(let number): (nil, number)
                }
                return CommandResult(
                    exitStatus: exitStatus, signal: signal, timedOut: outcome.timedOut,
                    duration: clock.now - start, output: outcome.output, outputTruncated: outcome.truncated, stopped: outcome.stopped)
            } catch let error as SubprocessError {
                let code = error.underlyingError?.rawValue
                if code == ETXTBSY, delay <= .milliseconds(64) {
                    try? await Task.sleep(for: delay)
                    delay *= 2
                    continue
                }
                if code == ENOENT, let why = whyNotRunnable(path) { return failure("\(path): \(why)") }
                return failure(code.map { errorMessage(path, $0) } ?? "\(path): \(error)")
            } catch {
                return failure("\(path): \(error)")
            }
        }
    }

    /// One generic call per standard-error choice, since each is its own output type.
    private static func launch(
        _ configuration: Configuration, _ standardInput: FileDescriptor, _ standardError: StandardError,
        _ supervisor: ChildSupervisor
    ) async throws -> (TerminationStatus, ChildSupervisor.Outcome) {
        let input = FileDescriptorInput.fileDescriptor(standardInput, closeAfterSpawningProcess: false)
        switch standardError {
        case .merged:
            let result = try await Subprocess.run(
                configuration, input: input, output: .sequence, error: .combinedWithOutput,
                body: { await supervisor.supervise($0) })
            return (result.terminationStatus, result.closureResult)
        case .inherited:
            let result = try await Subprocess.run(
                configuration, input: input, output: .sequence, error: .currentStandardError,
                body: { await supervisor.supervise($0) })
            return (result.terminationStatus, result.closureResult)
        }
    }

    /// swift-subprocess reports ENOENT whenever exec fails for a file that is there: a
    /// directory, a file without the execute bit, a script whose `#!` interpreter is missing.
    /// Says which, or nil when the path really does not exist.
    static func whyNotRunnable(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_mode & S_IFMT == S_IFDIR { return "it is a directory, not a program" }
        if access(path, X_OK) != 0 { return "it is not executable (chmod +x \(path))" }
        guard let handle = FileHandle(forReadingAtPath: path) else { return "it cannot be read" }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 256)) ?? Data(), as: UTF8.self)
        guard head.hasPrefix("#!") else { return nil }
        let interpreter = head.dropFirst(2).prefix { $0 != "\n" }.split(separator: " ").first.map(String.init) ?? ""
        if access(interpreter, X_OK) != 0 { return "its interpreter \(interpreter) (the #! line) cannot be run" }
        return nil
    }

    static func errorMessage(_ subject: String, _ code: Int32) -> String {
        "\(subject): \(String(cString: strerror(code)))"
    }
}
