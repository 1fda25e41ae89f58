import NotifBridgeWire

/// What the planner reads besides the event, the ledger and the burst state: the owner's
/// settings and the time, both given, so that planning reads no clock.
public struct AlertConditions: Sendable, Hashable {
    public var settings: AlertSettings
    /// Local time, minutes after midnight (0...1439), for quiet hours.
    public var minuteOfDay: Int
    /// Where the burst window stands.
    public var now: ContinuousClock.Instant

    public init(settings: AlertSettings, minuteOfDay: Int, now: ContinuousClock.Instant) {
        self.settings = settings
        self.minuteOfDay = minuteOfDay
        self.now = now
    }
}

/// Everything the accessory does about one event: the store writes `ledger` and `decision`,
/// the owner of the burst state applies `burst`, and the receipt, presenters and sinks act on
/// `decision`. Nothing downstream decides again.
public struct AlertPlan: Sendable, Hashable {
    /// What happens to the stored record.
    public var ledger: LedgerDecision
    /// The final decision for a new posting, burst limit included; nil when the event posts
    /// nothing new (an update, a removal, a replaced or ignored add).
    public var decision: AlertDecision?
    /// How the burst state moves; nil when the burst limit was not involved.
    public var burst: BurstLimiter.Step?

    public init(ledger: LedgerDecision, decision: AlertDecision? = nil, burst: BurstLimiter.Step? = nil) {
        self.ledger = ledger
        self.decision = decision
        self.burst = burst
    }

    /// Whether the accessory alerts for this event now: what the receipt reports.
    public var alerts: Bool { decision?.alerts ?? false }

    /// Whether the event changes the store.
    public var stores: Bool {
        if case .ignore = ledger { return false }
        return true
    }
}

/// The one place that decides whether a notification alerts: the ledger rules (replays,
/// updates and removals never alert), iOS's flags and the owner's policy (``AlertPolicy``),
/// then the burst limit. Pure: the same inputs always give the same plan.
public enum AlertPlanner {
    /// - Parameters:
    ///   - event: the host's event, as decrypted.
    ///   - revision: where it stands in the order events apply in.
    ///   - existing: the stored record for the event's notification, if any.
    ///   - removeAllWatermark: the revision of the newest remove-all, if any.
    ///   - burst: the burst state as it stands; the plan says how it moves.
    public static func plan(
        _ event: HostEvent.OneOf_Event?,
        at revision: Revision,
        existing: LedgerState?,
        removeAllWatermark: Revision?,
        conditions: AlertConditions,
        burst: BurstLimiter
    ) -> AlertPlan {
        let operation: NotificationLedger.Operation
        switch event {
        case .add: operation = .add
        case .update: operation = .update
        case .remove: operation = .remove
        case .removeAll: operation = .removeAll
        case nil: return AlertPlan(ledger: .ignore(.stale))
        }
        let ledger = NotificationLedger.decide(operation, at: revision, existing: existing, removeAllWatermark: removeAllWatermark)
        // Only a new posting may alert: an update whose add was missed is listed without one.
        guard case .insert = ledger, case .add(let add) = event else { return AlertPlan(ledger: ledger) }
        let decision = AlertPolicy.decide(AlertInput(add, minuteOfDay: conditions.minuteOfDay), settings: conditions.settings)
        guard decision.alerts, !decision.bypassesBurstLimit else { return AlertPlan(ledger: ledger, decision: decision) }
        let step = burst.step(forAlertAt: conditions.now)
        return AlertPlan(ledger: ledger, decision: step == .heldBack ? decision.heldBack() : decision, burst: step)
    }

    /// The summary alert for what a burst held back, once its window has room.
    public struct Summary: Sendable, Hashable {
        /// How many notifications it announces.
        public var count: Int
        /// The step that records it in the burst state.
        public var burst: BurstLimiter.Step
    }

    /// The summary alert due at `now`, if any.
    public static func summary(burst: BurstLimiter, now: ContinuousClock.Instant) -> Summary? {
        guard let step = burst.summaryStep(at: now), case .summarized(let count, _) = step else { return nil }
        return Summary(count: count, burst: step)
    }
}
