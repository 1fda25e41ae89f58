import NotifBridgeRelayCore
import Testing

@Suite("The relay's rates per accessory (pushes, posts)")
struct RateAllowanceTests {
    /// A push by `accessory` at `at` after the start, and whether it may go.
    struct Step: Sendable, CustomStringConvertible {
        var at: Duration
        var accessory = "a"
        var allowed: Bool
        var description: String { "\(accessory) at \(at): \(allowed ? "pushes" : "refused")" }
    }

    static let rate = RateLimit(burst: 3, interval: .seconds(1))

    @Test("Pushes against a burst of 3 and one more a second", arguments: [
        ("the burst goes at once, the one past it is refused", [
            Step(at: .zero, allowed: true), Step(at: .zero, allowed: true), Step(at: .zero, allowed: true),
            Step(at: .zero, allowed: false),
        ]),
        ("a token comes back after a whole interval, not a nanosecond before", [
            Step(at: .zero, allowed: true), Step(at: .zero, allowed: true), Step(at: .zero, allowed: true),
            Step(at: .seconds(1) - .nanoseconds(1), allowed: false), Step(at: .seconds(1), allowed: true),
            Step(at: .seconds(1), allowed: false),
        ]),
        ("a long quiet spell refills to the burst, no further", [
            Step(at: .zero, allowed: true), Step(at: .zero, allowed: true), Step(at: .zero, allowed: true),
            Step(at: .seconds(60), allowed: true), Step(at: .seconds(60), allowed: true), Step(at: .seconds(60), allowed: true),
            Step(at: .seconds(60), allowed: false),
        ]),
        ("the part of an interval left over counts toward the next token", [
            Step(at: .zero, allowed: true), Step(at: .zero, allowed: true), Step(at: .zero, allowed: true),
            Step(at: .milliseconds(1500), allowed: true), Step(at: .milliseconds(2000), allowed: true),
            Step(at: .milliseconds(2000), allowed: false),
        ]),
        ("each accessory has its own burst", [
            Step(at: .zero, allowed: true), Step(at: .zero, allowed: true), Step(at: .zero, allowed: true),
            Step(at: .zero, allowed: false), Step(at: .zero, accessory: "b", allowed: true),
            Step(at: .zero, accessory: "b", allowed: true), Step(at: .zero, accessory: "b", allowed: true),
            Step(at: .zero, accessory: "b", allowed: false),
        ]),
        ("a steady push a second is never refused", (0..<10).map { Step(at: .seconds($0), allowed: true) }),
    ])
    func steps(_ name: String, _ steps: [Step]) {
        var allowance = RateAllowance(rate: Self.rate)
        let start = ContinuousClock.now
        for step in steps {
            let allowed = allowance.take(for: step.accessory, now: start + step.at)
            #expect(allowed == step.allowed, "\(name): \(step)")
        }
    }

    @Test("A wait of many more intervals than an Int counts refills the bucket without trapping")
    func tinyInterval() {
        var allowance = RateAllowance(rate: RateLimit(burst: 1, interval: Duration(secondsComponent: 0, attosecondsComponent: 1)))
        let start = ContinuousClock.now
        let first = allowance.take(for: "a", now: start)
        // 100 s is 10^20 attoseconds, past Int.max (about 9.2 × 10^18).
        let later = allowance.take(for: "a", now: start + .seconds(100))
        #expect(first && later)
    }

    @Test("Full buckets leave the table: it holds twice the accessories pushing lately, or 64")
    func tableBound() {
        var allowance = RateAllowance(rate: RateLimit(burst: 1, interval: .seconds(1)))
        let start = ContinuousClock.now
        // One push each, two seconds apart: every earlier bucket is full again.
        for index in 0..<1000 {
            let allowed = allowance.take(for: "accessory-\(index)", now: start + .seconds(2 * index))
            #expect(allowed)
            #expect(allowance.trackedAccessories <= 64)
        }
        // A thousand at one instant are all pushing lately: the table keeps them.
        var burst = RateAllowance(rate: RateLimit(burst: 1, interval: .seconds(1)))
        for index in 0..<1000 { _ = burst.take(for: "accessory-\(index)", now: start) }
        #expect(burst.trackedAccessories == 1000)
        let again = burst.take(for: "accessory-0", now: start)
        #expect(!again, "a bucket kept in a large table still counts")
    }

    @Test("How long until the next one: zero with a token left, the rest of the interval without, and counting nothing")
    func wait() {
        var allowance = RateAllowance(rate: Self.rate)
        let start = ContinuousClock.now
        #expect(allowance.wait(for: "a", now: start) == .zero, "an accessory never seen")
        for _ in 0..<3 { _ = allowance.take(for: "a", now: start) }
        #expect(allowance.wait(for: "a", now: start) == .seconds(1))
        #expect(allowance.wait(for: "a", now: start + .milliseconds(400)) == .milliseconds(600))
        #expect(allowance.wait(for: "a", now: start + .seconds(1) - .nanoseconds(1)) == .nanoseconds(1))
        #expect(allowance.wait(for: "a", now: start + .seconds(1)) == .zero)
        #expect(allowance.wait(for: "b", now: start) == .zero, "another accessory's bucket")
        let taken = allowance.take(for: "a", now: start + .seconds(1))
        #expect(taken, "asking how long took no token")
        #expect(allowance.wait(for: "a", now: start + .milliseconds(1500)) == .milliseconds(500))
    }

    @Test("Retry-After: whole seconds rounded up, at least 1", arguments: [
        (Duration.zero, 3_600), (.seconds(1), 3_599), (.milliseconds(1_001), 3_599), (.seconds(3_599), 1),
        (.seconds(3_600) - .nanoseconds(1), 1), (.seconds(3_600), 1),
    ])
    func retryAfter(after elapsed: Duration, seconds: Int) {
        var allowance = RateAllowance(rate: RateLimit(burst: 1, interval: .seconds(3_600)))
        let start = ContinuousClock.now
        _ = allowance.take(for: "a", now: start)
        #expect(allowance.retryAfterSeconds(for: "a", now: start + elapsed) == seconds)
    }
}
