/// Keeps a hostile peer from flooding the accessory's log: for each origin (a remote address,
/// a Bluetooth device), the first `burst` lines in a window of `interval` are written, and the
/// rest are only counted and reported once per window as a summary. All origins together write
/// at most `maxLines` lines a window and `maxSummaries` summaries, so that a peer with many
/// addresses (an IPv6 network gives it millions) gains nothing by using them. Pure: time is an
/// input.
public struct LogThrottle: Sendable {
    public struct Summary: Equatable, Sendable {
        public var origin: String
        public var suppressed: Int

        public init(origin: String, suppressed: Int) {
            self.origin = origin
            self.suppressed = suppressed
        }
    }

    public let burst: Int
    public let interval: Duration
    /// Origins tracked at once; further origins share one window, so a peer with many
    /// addresses cannot grow this table either.
    public let maxOrigins: Int
    /// Lines written in one window of `interval`, whatever their origins.
    public let maxLines: Int
    /// Summaries returned at once; past it, the origins that suppressed least are added up in
    /// one.
    public let maxSummaries: Int

    /// The shared window for origins past `maxOrigins`.
    public static let overflowOrigin = "lines about other peers"

    private struct Window: Sendable {
        var start: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    private var windows: [String: Window] = [:]
    /// Every origin's lines, for `maxLines`.
    private var all: Window?

    public init(burst: Int = 5, interval: Duration = .seconds(10), maxOrigins: Int = 256, maxLines: Int = 100, maxSummaries: Int = 10) {
        precondition(burst >= 1 && maxOrigins >= 1 && maxLines >= 1 && maxSummaries >= 2, "a throttle writes at least one line for at least one origin")
        self.burst = burst
        self.interval = interval
        self.maxOrigins = maxOrigins
        self.maxLines = maxLines
        self.maxSummaries = maxSummaries
    }

    /// Whether a line about `origin` may be written now; if not, it is counted for the summary.
    public mutating func admit(_ origin: String, now: ContinuousClock.Instant) -> Bool {
        let key = windows[origin] != nil || windows.count < maxOrigins ? origin : Self.overflowOrigin
        var window = windows[key] ?? Window(start: now)
        defer { windows[key] = window }
        var shared = all.flatMap { now - $0.start < interval ? $0 : nil } ?? Window(start: now)
        defer { all = shared }
        guard window.written < burst, shared.written < maxLines else {
            window.suppressed += 1
            return false
        }
        window.written += 1
        shared.written += 1
        return true
    }

    /// Closes every window older than `interval` and returns the ones that suppressed lines.
    public mutating func summaries(now: ContinuousClock.Instant) -> [Summary] {
        var due: [Summary] = []
        for (origin, window) in windows where now - window.start >= interval {
            windows[origin] = nil
            if window.suppressed > 0 { due.append(Summary(origin: origin, suppressed: window.suppressed)) }
        }
        guard due.count > maxSummaries else { return due.sorted { $0.origin < $1.origin } }
        let ranked = due.sorted { ($0.suppressed, $1.origin) > ($1.suppressed, $0.origin) }
        let rest = ranked.dropFirst(maxSummaries - 1)
        let kept = ranked.prefix(maxSummaries - 1).sorted { $0.origin < $1.origin }
        return kept + [Summary(origin: "lines about \(rest.count) other origins", suppressed: rest.reduce(0) { $0 + $1.suppressed })]
    }

    /// Origins with an open window (bounded by `maxOrigins` + 1).
    public var trackedOrigins: Int { windows.count }
}
