@testable import NotifBridgeAccessory
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// When the tick task closes a link whose loop is blocked writing, and when it must not: a
/// legitimate iPhone's link is never closed by it.
@Suite("The Hello backstop")
struct HelloBackstopTests {
    static let timeout = Duration.seconds(10)
    static let stall = Duration.seconds(1)

    /// A backstop opened at `opened`, with one write under way on its link until the returned
    /// task is cancelled; the instants just before and just after the write began.
    static func blockedWrite(opened: ContinuousClock.Instant, helloFirst: Bool = false) async throws -> (HelloBackstop, ContinuousClock.Instant, ContinuousClock.Instant, Task<Void, any Error>) {
        let backstop = HelloBackstop(openedAt: opened, helloTimeout: timeout, stall: stall)
        if helloFirst { backstop.sawHello() }
        let entered = Mutex(false)
        let (link, _) = ChunkLink.pair(kind: .localNetwork)
        var blocking = link
        blocking.write = { _ in
            entered.withLock { $0 = true }
            while true { try await Task.sleep(for: .milliseconds(5)) }
        }
        let watched = backstop.watching(blocking)
        let before = ContinuousClock.now
        let writer = Task { try await watched.write([[1]]) }
        try await TestWait.until("the write to begin") { entered.withLock { $0 } }
        let after = ContinuousClock.now
        return (backstop, before, after, writer)
    }

    @Test("No Hello past the deadline and one write lasting the stall: stuck; 1 ns short of either: not")
    func stuckOnlyPastBoth() async throws {
        // Opened long ago, so that the deadline has passed whenever the write began.
        let opened = ContinuousClock.now - .seconds(60)
        let (backstop, before, after, writer) = try await Self.blockedWrite(opened: opened)
        defer { writer.cancel() }
        #expect(backstop.isStuck(now: after + Self.stall), "the write has lasted the stall")
        #expect(!backstop.isStuck(now: before + Self.stall - .nanoseconds(1)), "the write began after `before`")
    }

    @Test("Before the deadline, however long the write: not stuck; just past it: stuck")
    func deadline() async throws {
        let opened = ContinuousClock.now
        let (backstop, _, after, writer) = try await Self.blockedWrite(opened: opened)
        defer { writer.cancel() }
        let deadline = opened + Self.timeout
        #expect(!backstop.isStuck(now: deadline), "the limit itself is allowed")
        #expect(backstop.isStuck(now: max(deadline, after + Self.stall) + .nanoseconds(1)))
    }

    @Test("A Hello seen, or no write under way: never stuck")
    func helloOrNoWrite() async throws {
        let opened = ContinuousClock.now - .seconds(60)
        let (seen, _, after, writer) = try await Self.blockedWrite(opened: opened, helloFirst: true)
        defer { writer.cancel() }
        #expect(!seen.isStuck(now: after + .seconds(600)))
        let idle = HelloBackstop(openedAt: opened, helloTimeout: Self.timeout, stall: Self.stall)
        #expect(!idle.isStuck(now: .now + .seconds(600)))
    }
}
