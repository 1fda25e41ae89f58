import Foundation
import Glibc

/// Starts one child with posix_spawn and supervises it on the calling thread. Shared by
/// `HookRunner` and `DesktopNotifier` so both get the same process-group, timeout and
/// SIGPIPE handling.
enum Subprocess {
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

    /// `environment` is the complete child environment as "NAME=value" strings. Blocks until
    /// the child has exited and been reaped; `cancelled` is polled so shutdown can kill it.
    static func run(
        _ arguments: [String], input: Data?, environment: [String], limits: Limits,
        standardError: StandardError = .merged, cancelled: () -> Bool
    ) -> CommandResult {
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
            let searchPath = environment.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) }
            guard let found = resolve(name, searchPath: searchPath) else { return failure("\(name): not found on PATH") }
            path = found
        }

        // A write to a hook that already closed stdin raises SIGPIPE on this thread; blocking it
        // here turns that into EPIPE without changing the process-wide disposition.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
        defer {
            var pending = sigset_t()
            sigpending(&pending)
            if sigismember(&pending, SIGPIPE) == 1, sigismember(&previousMask, SIGPIPE) == 0 {
                var zero = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &zero)
            }
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        }

        guard let outputPipe = makePipe() else { return failure(errorMessage("pipe", errno)) }
        var inputPipe: (read: Int32, write: Int32)?
        if input != nil {
            guard let made = makePipe() else {
                close(outputPipe.read)
                close(outputPipe.write)
                return failure(errorMessage("pipe", errno))
            }
            inputPipe = made
        }
        var (pid, spawnError) = spawn(path, arguments, environment, stdin: inputPipe?.read, output: outputPipe.write, standardError: standardError)
        // ETXTBSY: a script written moments ago is still open for writing in a child that another
        // thread forked and that has not reached exec yet. That clears within milliseconds.
        for delay: UInt32 in [2, 4, 8, 16, 32, 64] where spawnError == ETXTBSY {
            usleep(delay * 1000)
            (pid, spawnError) = spawn(path, arguments, environment, stdin: inputPipe?.read, output: outputPipe.write, standardError: standardError)
        }
        close(outputPipe.write)
        if let inputPipe { close(inputPipe.read) }
        guard spawnError == 0 else {
            close(outputPipe.read)
            if let inputPipe { close(inputPipe.write) }
            return failure(errorMessage(path, spawnError))
        }
        var supervisor = ChildSupervisor(
            pid: pid, inputFD: inputPipe?.write ?? -1, input: input ?? Data(),
            outputFD: outputPipe.read, limits: limits)
        return supervisor.run(start: start, cancelled: cancelled)
    }

    /// Close-on-exec so concurrent spawns don't inherit each other's pipe ends (which would
    /// delay EOF), and numbered 3 or above so the dup2s onto 0–2 can't clobber one another.
    private static func makePipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        if let pipe2: GNU.Pipe2 = GNU.symbol("pipe2") {
            guard pipe2(&fds, O_CLOEXEC) == 0 else { return nil }
        } else {
            guard pipe(&fds) == 0 else { return nil }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        for index in fds.indices where fds[index] < 3 {
            let raised = fcntl(fds[index], F_DUPFD_CLOEXEC, 3)
            guard raised >= 0 else {
                close(fds[0])
                close(fds[1])
                return nil
            }
            close(fds[index])
            fds[index] = raised
        }
        return (fds[0], fds[1])
    }

    /// The child gets its own process group (so a timeout kills `sh -c` grandchildren too), an
    /// empty signal mask, default dispositions for signals a daemon commonly ignores or blocks,
    /// and no file descriptors beyond 0–2.
    private static func spawn(
        _ path: String, _ arguments: [String], _ environment: [String], stdin: Int32?, output: Int32,
        standardError: StandardError
    ) -> (pid: pid_t, error: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        if standardError == .merged { posix_spawn_file_actions_adddup2(&actions, output, 2) }
        if let closeFrom: GNU.AddCloseFrom = GNU.symbol("posix_spawn_file_actions_addclosefrom_np") {
            _ = closeFrom(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        var pid: pid_t = 0
        let error = withCStringArray(arguments) { argv in
            withCStringArray(environment) { envp in
                posix_spawn(&pid, path, &actions, &attributes, argv, envp)
            }
        }
        return (pid, error)
    }

    private static func withCStringArray<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// glibc functions that the Swift Glibc module hides behind _GNU_SOURCE, found at run time
    /// (both exist since glibc 2.34); callers fall back when a C library lacks them.
    private enum GNU {
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

        static func symbol<Function>(_ name: String) -> Function? {
            dlsym(nil, name).map { unsafeBitCast($0, to: Function.self) }
        }
    }

    static func errorMessage(_ subject: String, _ code: Int32) -> String {
        "\(subject): \(String(cString: strerror(code)))"
    }
}
