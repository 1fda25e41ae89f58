/// What one hook run did, for the daemon to log or surface. It never carries the event itself.
public struct HookResult: Sendable, Equatable {
    /// The exit code, or nil when the hook was killed by a signal or never started.
    public var exitStatus: Int32?
    /// The signal that ended the hook (SIGTERM/SIGKILL after a timeout or shutdown, or a crash).
    public var signal: Int32?
    /// True when the hook outlived its timeout and was terminated.
    public var timedOut: Bool
    public var duration: Duration
    /// Standard output and standard error interleaved, cut to a small cap ("…" marks the cut).
    public var output: String
    /// Why the hook could not be started (missing executable, permissions); nil if it ran.
    public var launchError: String?
    /// The runner's shutdown terminated the hook: it did not fail.
    public var stopped: Bool

    public init(exitStatus: Int32?, signal: Int32? = nil, timedOut: Bool, duration: Duration, output: String, launchError: String?, stopped: Bool = false) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.duration = duration
        self.output = output
        self.launchError = launchError
        self.stopped = stopped
    }

    /// The output as text for logs; "…" marks where it was cut.
    init(_ result: CommandResult) {
        var text = String(decoding: result.output, as: UTF8.self)
        if result.outputTruncated { text += "…" }
        self.init(
            exitStatus: result.exitStatus, signal: result.signal, timedOut: result.timedOut,
            duration: result.duration, output: text, launchError: result.launchError, stopped: result.stopped)
    }

    /// Exit status 0 within the timeout.
    public var succeeded: Bool { exitStatus == 0 && !timedOut && launchError == nil }
}

/// Counters since the runner was created, plus the current load.
public struct HookStatistics: Sendable, Equatable {
    /// Runs taken off the queue and attempted, including ones that failed to launch.
    public var started = 0
    public var succeeded = 0
    /// Non-zero exits, deaths by signal other than a timeout or the shutdown, and launch errors.
    public var failed = 0
    public var timedOut = 0
    /// Runs the shutdown terminated.
    public var stopped = 0
    /// Events discarded because the queue was full (oldest first) or the runner was shut down.
    public var dropped = 0
    public var active = 0
    public var queued = 0
    /// Stdin bytes of the queued events.
    public var queuedBytes = 0

    public init() {}
}
