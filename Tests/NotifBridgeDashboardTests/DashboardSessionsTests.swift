import Synchronization
import Testing
@testable import NotifBridgeDashboard

/// Sessions end at their lifetime (not a moment before), and the oldest gives way at capacity.
@Suite("Dashboard sessions")
struct DashboardSessionsTests {
    /// A clock the test moves by hand.
    final class Clock: Sendable {
        let instant = Mutex(ContinuousClock.now)
        func advance(_ by: Duration) { instant.withLock { $0 += by } }
        var now: @Sendable () -> ContinuousClock.Instant { { [self] in instant.withLock { $0 } } }
    }

    @Test("open until the lifetime has passed: a nanosecond before it is open, at it is not", arguments: [
        (Duration.seconds(60) - .nanoseconds(1), true),
        (.seconds(60), false),
    ])
    func lifetime(elapsed: Duration, open: Bool) {
        let clock = Clock()
        let sessions = DashboardSessions(lifetime: .seconds(60), capacity: 4, now: clock.now)
        let name = sessions.open()
        clock.advance(elapsed)
        #expect(sessions.isOpen(Substring(name)) == open)
        #expect(sessions.count == (open ? 1 : 0), "an ended session is forgotten when seen")
    }

    @Test("at capacity every session stays; one more pushes out the oldest only", arguments: [4, 5])
    func capacity(logins: Int) {
        let clock = Clock()
        let sessions = DashboardSessions(lifetime: .seconds(60), capacity: 4, now: clock.now)
        var names: [String] = []
        for _ in 0..<logins {
            names.append(sessions.open())
            clock.advance(.seconds(1))
        }
        #expect(sessions.count == 4)
        #expect(sessions.isOpen(Substring(names[0])) == (logins <= 4))
        #expect(names.dropFirst().allSatisfy { sessions.isOpen(Substring($0)) })
    }

    @Test("names are 64 hex digits, each new; a closed or unknown name opens nothing")
    func names() {
        let sessions = DashboardSessions()
        let first = sessions.open(), second = sessions.open()
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit) && first != second)
        sessions.close(Substring(first))
        #expect(!sessions.isOpen(Substring(first)) && sessions.isOpen(Substring(second)))
        #expect(!sessions.isOpen(""))
        #expect(!sessions.isOpen(Substring(String(second.dropLast()) + (second.last == "0" ? "1" : "0"))))
    }
}
