import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeWire
import Testing

@Suite("Alert planner")
struct AlertPlannerTests {
    static let t0 = ContinuousClock.now
    static let limit = BurstLimiter.Limit(maxAlerts: 3, windowSeconds: 60)
    static let settings = AlertSettings(quietHours: QuietHours(start: TimeOfDay("22:00")!, end: TimeOfDay("07:00")!), mutedApps: ["com.example.games"])

    /// Whether and how the burst state moves.
    enum Burst: Sendable, Equatable { case untouched, alerted, heldBack, summarized }

    /// One row: the event, the ledger, the time and the burst window, and the whole plan.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var event: HostEvent.OneOf_Event?
        var at = r(1, 10)
        var existing: LedgerState? = nil
        var watermark: Revision? = nil
        var minuteOfDay = 12 * 60
        /// Alerts already in the window, all made at t0.
        var alertsInWindow = 0
        /// Notifications already held back for the summary.
        var pending = 0
        /// How long after t0 the event arrives.
        var elapsed: Duration = .zero
        var ledger: LedgerDecision
        /// nil: the plan has no decision (nothing new was posted).
        var presentation: AlertDecision.Presentation?
        var urgent = false
        var coalesced = false
        var burst = Burst.untouched
        var testDescription: String { name }
    }

    static func r(_ epoch: Int64, _ sequence: UInt64) -> Revision { Revision(epoch: epoch, sequence: sequence) }
    static let live = LedgerState(revision: r(1, 5), removed: false)
    static let gone = LedgerState(revision: r(1, 5), removed: true)

    static func add(shouldAlert: Bool = true, kind: Notifbridge_V1_AlertingContext.Kind = .notification, attributes: [Notifbridge_V1_Attribute] = [], source: String = "com.example.chat") -> HostEvent.OneOf_Event {
        .add(.with {
            $0.notification.id = .with { $0.sourceIdentifier = source; $0.notificationIdentifier = "n" }
            $0.notification.attributes = attributes.reduce(0) { $0 | UInt32($1.rawValue) }
            $0.alerting.shouldAlert = shouldAlert
            $0.alerting.notificationCanAlert = true
            $0.alerting.kind = kind
        })
    }

    static let update = HostEvent.OneOf_Event.update(.with { $0.notification.id = .with { $0.sourceIdentifier = "com.example.chat"; $0.notificationIdentifier = "n" } })
    static let remove = HostEvent.OneOf_Event.remove(.with { $0.id = .with { $0.sourceIdentifier = "com.example.chat"; $0.notificationIdentifier = "n" } })
    static let removeAll = HostEvent.OneOf_Event.removeAll(.init())

    static let rows: [Row] = [
        // Ledger outcomes: only a new posting gets a decision.
        Row(name: "new add, iOS says alert: alerts and takes a place in the window", event: add(), ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "new add, iOS says no: listed, the window untouched", event: add(shouldAlert: false), ledger: .insert, presentation: .list),
        Row(name: "update whose add was missed: stored, no decision, no alert", event: update, ledger: .insert),
        Row(name: "replayed add (same revision): ignored", event: add(), at: r(1, 5), existing: live, ledger: .ignore(.stale)),
        Row(name: "newer add of a live notification: replaced, never re-alerts", event: add(), at: r(1, 6), existing: live, ledger: .replace),
        Row(name: "newer add after a removal: a new posting that alerts", event: add(), at: r(1, 6), existing: gone, ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "update of a live notification: replaced", event: update, at: r(1, 6), existing: live, ledger: .replace),
        Row(name: "update of a removed notification: ignored", event: update, at: r(1, 6), existing: gone, ledger: .ignore(.removed)),
        Row(name: "remove of a live notification", event: remove, at: r(1, 6), existing: live, ledger: .markRemoved),
        Row(name: "remove of an unseen notification: tombstone", event: remove, ledger: .markRemoved),
        Row(name: "add at the remove-all watermark: ignored", event: add(), at: r(1, 3), watermark: r(1, 3), ledger: .ignore(.beforeRemoveAll)),
        Row(name: "add just after the remove-all watermark: alerts", event: add(), at: r(1, 4), watermark: r(1, 3), ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "remove-all at the watermark: ignored", event: removeAll, at: r(1, 3), watermark: r(1, 3), ledger: .ignore(.beforeRemoveAll)),
        Row(name: "remove-all just after the watermark", event: removeAll, at: r(1, 4), watermark: r(1, 3), ledger: .markRemoved),
        Row(name: "an empty event changes nothing", event: nil, ledger: .ignore(.stale)),
        // Policy: the owner's settings, on a new posting.
        Row(name: "muted app: listed", event: add(source: "com.example.games"), ledger: .insert, presentation: .list),
        Row(name: "quiet hours: 21:59 is before them", event: add(), minuteOfDay: 21 * 60 + 59, ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "quiet hours: 22:00 is inside", event: add(), minuteOfDay: 22 * 60, ledger: .insert, presentation: .list),
        Row(name: "newer add of a live muted-app notification: replaced, no decision", event: add(source: "com.example.games"), at: r(1, 6), existing: live, ledger: .replace),
        // Burst: at most 3 alerts in 60 s.
        Row(name: "limit − 1 in the window: the limit-th alerts", event: add(), alertsInWindow: 2, ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "limit in the window: limit + 1 is coalesced and counted", event: add(), alertsInWindow: 3, ledger: .insert, presentation: .list, coalesced: true, burst: .heldBack),
        Row(name: "full window, 59 s later: still coalesced", event: add(), alertsInWindow: 3, elapsed: .seconds(59), ledger: .insert, presentation: .list, coalesced: true, burst: .heldBack),
        Row(name: "full window, 60 s later: room again, alerts", event: add(), alertsInWindow: 3, elapsed: .seconds(60), ledger: .insert, presentation: .alert, burst: .alerted),
        Row(name: "room in the window but a summary pending: joins the summary", event: add(), pending: 1, ledger: .insert, presentation: .list, coalesced: true, burst: .heldBack),
        Row(name: "full window, iOS says no: listed for iOS's reason, not counted", event: add(shouldAlert: false), alertsInWindow: 3, ledger: .insert, presentation: .list),
        Row(name: "full window, time-sensitive: alerts, bypassing the limit", event: add(attributes: [.timeSensitive]), alertsInWindow: 3, ledger: .insert, presentation: .alert, urgent: true),
        Row(name: "full window, incoming call: rings, bypassing the limit", event: add(kind: .incomingCall), alertsInWindow: 3, ledger: .insert, presentation: .alert, urgent: true),
        Row(name: "full window, timer: alerts, bypassing the limit", event: add(kind: .timer), alertsInWindow: 3, ledger: .insert, presentation: .alert, urgent: true),
        Row(name: "full window, critical: alerts, bypassing the limit", event: add(attributes: [.critical]), alertsInWindow: 3, ledger: .insert, presentation: .alert, urgent: true),
        Row(name: "empty window, time-sensitive: alerts without taking a place", event: add(attributes: [.timeSensitive]), ledger: .insert, presentation: .alert, urgent: true),
        Row(name: "full window, replayed add: ignored, not counted", event: add(), at: r(1, 5), existing: live, alertsInWindow: 3, ledger: .ignore(.stale)),
    ]

    static func burst(alerts: Int, pending: Int) -> BurstLimiter {
        var burst = BurstLimiter(limit: limit)
        for _ in 0..<alerts { burst.advance(.alerted(at: t0)) }
        for _ in 0..<pending { burst.advance(.heldBack) }
        return burst
    }

    @Test("Ledger outcome × policy × burst → one plan", arguments: rows)
    func table(_ row: Row) {
        let now = Self.t0 + row.elapsed
        let plan = AlertPlanner.plan(
            row.event, at: row.at, existing: row.existing, removeAllWatermark: row.watermark,
            conditions: AlertConditions(settings: Self.settings, minuteOfDay: row.minuteOfDay, now: now),
            burst: Self.burst(alerts: row.alertsInWindow, pending: row.pending)
        )
        #expect(plan.ledger == row.ledger)
        #expect(plan.decision?.presentation == row.presentation)
        #expect(plan.alerts == (row.presentation == .alert))
        #expect((plan.decision?.urgent ?? false) == row.urgent)
        #expect((plan.decision?.coalesced ?? false) == row.coalesced)
        let burst: Burst = switch plan.burst {
        case nil: .untouched
        case .alerted(let at): at == now ? .alerted : .untouched
        case .heldBack: .heldBack
        case .summarized: .summarized
        }
        #expect(burst == row.burst, "an alert's place in the window is taken at the planned instant")
        #expect(plan.stores == (row.ledger != .ignore(.stale) && row.ledger != .ignore(.removed) && row.ledger != .ignore(.beforeRemoveAll)))
    }

    /// Plans `count` ordinary adds at `now`, applying each plan's step as the daemon does.
    static func plan(_ count: Int, at now: ContinuousClock.Instant, burst: inout BurstLimiter) -> [AlertPlan] {
        (0..<count).map { _ in
            let plan = AlertPlanner.plan(add(), at: r(1, 1), existing: nil, removeAllWatermark: nil, conditions: AlertConditions(settings: .default, minuteOfDay: 720, now: now), burst: burst)
            if let step = plan.burst { burst.advance(step) }
            return plan
        }
    }

    @Test("limit alerts, then coalesced ones, then one summary when the window has room, then alerts again")
    func burstThenSummary() throws {
        var burst = BurstLimiter(limit: Self.limit)
        let first = Self.plan(5, at: Self.t0, burst: &burst)
        #expect(first.map(\.alerts) == [true, true, true, false, false])
        #expect(first.map { $0.decision?.coalesced ?? false } == [false, false, false, true, true])
        #expect(first.allSatisfy { $0.decision?.bypassesBurstLimit == false })
        #expect(AlertPlanner.summary(burst: burst, now: Self.t0 + .seconds(59)) == nil, "the window is still full")
        let summary = try #require(AlertPlanner.summary(burst: burst, now: Self.t0 + .seconds(60)))
        #expect(summary.count == 2)
        #expect(AlertPlanner.summary(burst: burst, now: Self.t0 + .seconds(60)) == summary, "planning changes nothing until the step is applied")
        burst.advance(summary.burst)
        #expect(AlertPlanner.summary(burst: burst, now: Self.t0 + .seconds(61)) == nil, "one summary only")
        let later = Self.plan(3, at: Self.t0 + .seconds(61), burst: &burst)
        #expect(later.map(\.alerts) == [true, true, false], "the summary took one of the three places")
        #expect(burst.pendingSummary == 1)
    }

    @Test("A coalesced decision says so when stored; others encode as before")
    func coalescedCoding() throws {
        var burst = Self.burst(alerts: 3, pending: 0)
        let plan = try #require(Self.plan(1, at: Self.t0, burst: &burst).first?.decision)
        let stored = try JSONDecoder().decode(AlertDecision.self, from: JSONEncoder().encode(plan))
        #expect(stored == plan && stored.coalesced)
        let ordinary = AlertPolicy.decide(AlertInput(shouldAlert: true), settings: .default)
        #expect(!String(decoding: try JSONEncoder().encode(ordinary), as: UTF8.self).contains("coalesced"))
    }
}
