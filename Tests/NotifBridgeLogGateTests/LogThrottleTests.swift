import NotifBridgeLogGate
import Testing

@Suite("Log throttle")
struct LogThrottleTests {
    private let start = ContinuousClock.now

    @Test("Per origin, `burst` lines pass in a window and the next is counted", arguments: [
        (burst: 1, attempts: 1, written: 1, suppressed: 0),
        (burst: 1, attempts: 2, written: 1, suppressed: 1),
        (burst: 5, attempts: 5, written: 5, suppressed: 0),
        (burst: 5, attempts: 6, written: 5, suppressed: 1),
        (burst: 5, attempts: 25_000, written: 5, suppressed: 24_995),
    ])
    func burstBoundary(burst: Int, attempts: Int, written: Int, suppressed: Int) {
        var throttle = LogThrottle(burst: burst, interval: .seconds(10))
        let admitted = (0..<attempts).filter { _ in throttle.admit("10.0.0.9", now: start) }.count
        #expect(admitted == written)
        let summaries = throttle.summaries(now: start + .seconds(10))
        #expect(summaries == (suppressed > 0 ? [LogThrottle.Summary(origin: "10.0.0.9", suppressed: suppressed)] : []))
    }

    @Test("A window closes at `interval`, not before; then the origin may write again")
    func windowBoundary() {
        var throttle = LogThrottle(burst: 1, interval: .seconds(10))
        let justBefore = start + .seconds(10) - .milliseconds(1)
        let steps: [(admitted: Bool, summaries: [LogThrottle.Summary])] = [
            (throttle.admit("a", now: start), []),
            (throttle.admit("a", now: start + .seconds(1)), throttle.summaries(now: justBefore)),
            (throttle.admit("a", now: justBefore), throttle.summaries(now: start + .seconds(10))),
            (throttle.admit("a", now: start + .seconds(10)), []),
        ]
        #expect(steps.map(\.admitted) == [true, false, false, true], "the window closes at `interval`; then a new one opens")
        #expect(steps[1].summaries == [], "the window is still open 1 ms before `interval`")
        #expect(steps[2].summaries == [LogThrottle.Summary(origin: "a", suppressed: 2)])
    }

    @Test("Origins do not share a window, and the table is bounded whatever the peers do")
    func origins() {
        var throttle = LogThrottle(burst: 1, interval: .seconds(10), maxOrigins: 2)
        let admitted = ["a", "b", "c", "d"].map { throttle.admit($0, now: start) }
        #expect(admitted == [true, true, true, false], "own windows for a and b; c opens the shared window past maxOrigins and d shares it")
        for n in 0..<10_000 { _ = throttle.admit("peer-\(n)", now: start) }
        #expect(throttle.trackedOrigins == 3)
        let summaries = throttle.summaries(now: start + .seconds(10))
        #expect(summaries == [LogThrottle.Summary(origin: LogThrottle.overflowOrigin, suppressed: 10_001)])
        #expect(throttle.trackedOrigins == 0)
    }

    /// The whole log's bound: a peer with many addresses gets `maxLines` lines a window between
    /// all of them, and one more is counted under its own origin.
    @Test("All origins together write maxLines lines a window; one more is counted; the next window writes again", arguments: [100, 101])
    func allOrigins(lines: Int) {
        var throttle = LogThrottle(burst: 5, interval: .seconds(10), maxOrigins: 256, maxLines: 100)
        let admitted = (0..<lines).filter { throttle.admit("2001:db8::\($0)", now: start) }.count
        #expect(admitted == 100)
        #expect(throttle.summaries(now: start + .seconds(10)) == (lines > 100 ? [LogThrottle.Summary(origin: "2001:db8::100", suppressed: 1)] : []))
        let nextWindow = throttle.admit("2001:db8::100", now: start + .seconds(10))
        #expect(nextWindow, "a new window")
    }

    @Test("At most maxSummaries summaries; past it the origins that suppressed least are added up in one", arguments: [4, 5])
    func summaryBound(origins: Int) {
        var throttle = LogThrottle(burst: 1, interval: .seconds(10), maxSummaries: 4)
        for origin in 0..<origins {
            for _ in 0...(origin + 1) { _ = throttle.admit("o\(origin)", now: start) }
        }
        let summaries = throttle.summaries(now: start + .seconds(10))
        if origins == 4 {
            #expect(summaries == (0..<4).map { LogThrottle.Summary(origin: "o\($0)", suppressed: $0 + 1) })
        } else {
            #expect(summaries == [
                LogThrottle.Summary(origin: "o2", suppressed: 3), LogThrottle.Summary(origin: "o3", suppressed: 4), LogThrottle.Summary(origin: "o4", suppressed: 5),
                LogThrottle.Summary(origin: "lines about 2 other origins", suppressed: 1 + 2),
            ])
        }
    }
}
