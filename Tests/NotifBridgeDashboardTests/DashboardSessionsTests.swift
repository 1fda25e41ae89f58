import Foundation
import Synchronization
import Testing
@testable import NotifBridgeDashboard

/// Sessions are signed with the token's key: they end at their lifetime (not a moment before),
/// outlive a restart, die with the token, and a signed-out one stays out.
@Suite("Dashboard sessions")
struct DashboardSessionsTests {
    /// A wall clock the test moves by hand.
    final class Clock: Sendable {
        let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: Double) { date.withLock { $0 += seconds } }
        var now: @Sendable () -> Date { { [self] in date.withLock { $0 } } }
    }

    static let token = DashboardToken(value: String(repeating: "ab", count: 32))
    static let otherToken = DashboardToken(value: String(repeating: "cd", count: 32))

    @Test("open until the lifetime has passed: a second before it is open, at it is not", arguments: [(59.0, true), (60.0, false)])
    func lifetime(elapsed: Double, open: Bool) {
        let clock = Clock()
        let sessions = DashboardSessions(token: Self.token, lifetime: .seconds(60), now: clock.now)
        let cookie = sessions.open()
        clock.advance(elapsed)
        #expect(sessions.isOpen(Substring(cookie)) == open)
    }

    @Test("a cookie outlives a restart (another instance, the same token), not a new token")
    func restart() {
        let cookie = DashboardSessions(token: Self.token).open()
        #expect(DashboardSessions(token: Self.token).isOpen(Substring(cookie)))
        #expect(!DashboardSessions(token: Self.otherToken).isOpen(Substring(cookie)))
    }

    @Test("a cookie changed anywhere, or not of this form, opens nothing")
    func tampered() {
        let sessions = DashboardSessions(token: Self.token)
        let cookie = sessions.open()
        let parts = cookie.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && parts[0].count == 32 && parts[2].count == 44)
        let later = "\(parts[0]).\(Int(parts[1])! + 3600).\(parts[2])"
        let mac = Array(parts[2])
        let flipped = "\(parts[0]).\(parts[1]).\(String([mac[0] == "A" ? "B" : "A"] + mac.dropFirst()))"
        for forged in [later, flipped, "", "..", parts[0], Self.token.value, cookie + "."] {
            #expect(!sessions.isOpen(Substring(forged)), "\(forged)")
        }
    }

    /// The limit of remembered sign-outs: at it, every one stays out; one more forgets the one
    /// that ends soonest (a copy of its cookie would open again until it expires).
    @Test("signed-out sessions stay out, up to the limit; one more forgets the soonest to end", arguments: [3, 4])
    func signedOut(closed: Int) {
        let clock = Clock()
        let sessions = DashboardSessions(token: Self.token, lifetime: .seconds(600), maxSignedOut: 3, now: clock.now)
        var cookies: [String] = []
        for _ in 0..<closed {
            cookies.append(sessions.open())
            clock.advance(1)
        }
        let kept = sessions.open()
        for cookie in cookies { sessions.close(Substring(cookie)) }
        #expect(sessions.isOpen(Substring(cookies[0])) == (closed > 3))
        #expect(cookies.dropFirst().allSatisfy { !sessions.isOpen(Substring($0)) })
        #expect(sessions.isOpen(Substring(kept)))
    }
}
