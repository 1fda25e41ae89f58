import NotifBridgeAccessoryCore
import Testing

@Suite("Alert policy")
struct AlertPolicyTests {
    /// One row: the situation, and what the accessory must do.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var input: AlertInput
        var silentMode = false
        var presentation: AlertDecision.Presentation
        var sound: AlertDecision.Sound
        var haptic: AlertDecision.Haptic
        var persistent: Bool
        /// Never held back by a burst.
        var urgent: Bool
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "notification, iOS says alert", input: AlertInput(shouldAlert: true), presentation: .alert, sound: .normal, haptic: .tap, persistent: false, urgent: false),
        Row(name: "notification in silent mode: haptic only", input: AlertInput(shouldAlert: true), silentMode: true, presentation: .alert, sound: .none, haptic: .tap, persistent: false, urgent: false),
        Row(name: "notification without a sound", input: AlertInput(shouldAlert: true, ignoresSilentMode: nil), presentation: .alert, sound: .none, haptic: .tap, persistent: false, urgent: false),
        Row(name: "notification silenced by Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "notification already alerted elsewhere", input: AlertInput(shouldAlert: false, canAlert: false), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "notification iOS chose not to alert", input: AlertInput(shouldAlert: false), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "time-sensitive", input: AlertInput(shouldAlert: true, timeSensitive: true), presentation: .alert, sound: .normal, haptic: .double, persistent: false, urgent: true),
        Row(name: "time-sensitive in silent mode", input: AlertInput(shouldAlert: true, timeSensitive: true), silentMode: true, presentation: .alert, sound: .none, haptic: .double, persistent: false, urgent: true),
        Row(name: "time-sensitive silenced by Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, timeSensitive: true), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "critical in silent mode still sounds", input: AlertInput(shouldAlert: true, critical: true), silentMode: true, presentation: .alert, sound: .evenInSilentMode, haptic: .long, persistent: true, urgent: true),
        Row(name: "critical breaks through Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, critical: true), presentation: .alert, sound: .evenInSilentMode, haptic: .long, persistent: true, urgent: true),
        Row(name: "critical that iOS did not allow", input: AlertInput(shouldAlert: false, canAlert: false, critical: true), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "critical without a sound", input: AlertInput(shouldAlert: true, ignoresSilentMode: nil, critical: true), presentation: .alert, sound: .none, haptic: .long, persistent: true, urgent: true),
        Row(name: "sound that ignores silent mode, in silent mode", input: AlertInput(shouldAlert: true, ignoresSilentMode: true), silentMode: true, presentation: .alert, sound: .evenInSilentMode, haptic: .long, persistent: true, urgent: true),
        Row(name: "incoming call rings until answered", input: AlertInput(shouldAlert: true, kind: .incomingCall), presentation: .alert, sound: .normal, haptic: .ring, persistent: true, urgent: true),
        Row(name: "incoming call in silent mode: ring haptic, no sound", input: AlertInput(shouldAlert: true, kind: .incomingCall), silentMode: true, presentation: .alert, sound: .none, haptic: .ring, persistent: true, urgent: true),
        Row(name: "incoming call silenced by Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, kind: .incomingCall), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
        Row(name: "timer stays until dismissed", input: AlertInput(shouldAlert: true, kind: .timer), presentation: .alert, sound: .normal, haptic: .long, persistent: true, urgent: true),
        Row(name: "timer in silent mode", input: AlertInput(shouldAlert: true, kind: .timer), silentMode: true, presentation: .alert, sound: .none, haptic: .long, persistent: true, urgent: true),
        Row(name: "active call is a status, never an alert", input: AlertInput(shouldAlert: true, kind: .activeCall), presentation: .list, sound: .none, haptic: .none, persistent: true, urgent: false),
        Row(name: "unknown future kind alerts like a notification", input: AlertInput(shouldAlert: true, kind: .unknown), presentation: .alert, sound: .normal, haptic: .tap, persistent: false, urgent: false),
        Row(name: "unknown future kind silenced by Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, kind: .unknown), presentation: .list, sound: .none, haptic: .none, persistent: false, urgent: false),
    ]

    @Test("Kind × Focus × silent mode × attributes → presentation, sound, haptic, persistence, urgency", arguments: rows)
    func table(_ row: Row) {
        let decision = AlertPolicy.decide(row.input, settings: AlertSettings(silentMode: row.silentMode))
        #expect(decision.presentation == row.presentation)
        #expect(decision.sound == row.sound)
        #expect(decision.haptic == row.haptic)
        #expect(decision.persistent == row.persistent)
        #expect(decision.urgent == row.urgent)
        #expect(!decision.reason.isEmpty)
    }

    struct SettingsRow: CustomTestStringConvertible, Sendable {
        var name: String
        var input: AlertInput
        var alerts: Bool
        var testDescription: String { name }
    }

    static let settings = AlertSettings(
        quietHours: QuietHours(start: TimeOfDay("22:00")!, end: TimeOfDay("07:00")!),
        mutedApps: ["com.example.games"],
        allowedApps: ["com.example.family"],
        keywords: [
            KeywordRule(match: "urgent", action: .alert),
            KeywordRule(match: "sale", action: .mute, fields: [.title]),
        ]
    )
    static func at(_ time: String) -> Int { TimeOfDay(time)!.minuteOfDay }

    static let settingsRows: [SettingsRow] = [
        SettingsRow(name: "muted app does not alert", input: AlertInput(shouldAlert: true, source: "com.example.games"), alerts: false),
        SettingsRow(name: "muted app alerts on an alert keyword", input: AlertInput(shouldAlert: true, source: "com.example.games", body: "URGENT: server down"), alerts: true),
        SettingsRow(name: "mute keyword in the title", input: AlertInput(shouldAlert: true, title: "Big Sale today"), alerts: false),
        SettingsRow(name: "mute keyword only checks the fields it names", input: AlertInput(shouldAlert: true, body: "sale"), alerts: true),
        SettingsRow(name: "quiet hours: 21:59 is before them", input: AlertInput(shouldAlert: true, minuteOfDay: at("21:59")), alerts: true),
        SettingsRow(name: "quiet hours: 22:00 is inside", input: AlertInput(shouldAlert: true, minuteOfDay: at("22:00")), alerts: false),
        SettingsRow(name: "quiet hours: 06:59 is inside (past midnight)", input: AlertInput(shouldAlert: true, minuteOfDay: at("06:59")), alerts: false),
        SettingsRow(name: "quiet hours: 07:00 is after them", input: AlertInput(shouldAlert: true, minuteOfDay: at("07:00")), alerts: true),
        SettingsRow(name: "quiet hours let time-sensitive through", input: AlertInput(shouldAlert: true, timeSensitive: true, minuteOfDay: at("23:00")), alerts: true),
        SettingsRow(name: "quiet hours let calls through", input: AlertInput(shouldAlert: true, kind: .incomingCall, minuteOfDay: at("23:00")), alerts: true),
        SettingsRow(name: "quiet hours let timers through", input: AlertInput(shouldAlert: true, kind: .timer, minuteOfDay: at("23:00")), alerts: true),
        SettingsRow(name: "quiet hours let allowed apps through", input: AlertInput(shouldAlert: true, source: "com.example.family", minuteOfDay: at("23:00")), alerts: true),
        SettingsRow(name: "quiet hours let alert keywords through", input: AlertInput(shouldAlert: true, title: "Urgent", minuteOfDay: at("23:00")), alerts: true),
        SettingsRow(name: "an alert keyword never overrides the iPhone's Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, title: "urgent"), alerts: false),
        SettingsRow(name: "an allowed app never overrides the iPhone's Focus", input: AlertInput(shouldAlert: false, suppressedByFocus: true, source: "com.example.family"), alerts: false),
        SettingsRow(name: "critical ignores muting and quiet hours", input: AlertInput(shouldAlert: true, critical: true, source: "com.example.games", minuteOfDay: at("23:00")), alerts: true),
    ]

    @Test("Accessory settings: muted apps, keywords, quiet hours", arguments: settingsRows)
    func settingsTable(_ row: SettingsRow) {
        #expect(AlertPolicy.decide(row.input, settings: Self.settings).alerts == row.alerts)
    }

    @Test("Times of day parse strictly", arguments: [("00:00", true), ("23:59", true), ("24:00", false), ("7:00", false), ("07:60", false), ("07-00", false), ("", false)])
    func timeOfDay(text: String, valid: Bool) {
        #expect((TimeOfDay(text) != nil) == valid)
    }
}

@Suite("Burst limiter")
struct BurstLimiterTests {
    let t0 = ContinuousClock.now

    @Test("At most maxAlerts per window; the rest wait for one summary")
    func burst() {
        var limiter = BurstLimiter(limit: .init(maxAlerts: 5, windowSeconds: 60))
        let admitted = (0..<500).filter { _ in limiter.admit(now: t0) }.count
        #expect(admitted == 5)
        #expect(limiter.pendingSummary == 495)
        let tooEarly = limiter.summaryDue(now: t0 + .seconds(59))
        #expect(tooEarly == nil, "the window is still full")
        let due = limiter.summaryDue(now: t0 + .seconds(60))
        #expect(due == 495)
        let again = limiter.summaryDue(now: t0 + .seconds(61))
        #expect(again == nil, "one summary only")
    }

    @Test("Alerting resumes after the summary, still within the limit")
    func afterSummary() {
        var limiter = BurstLimiter(limit: .init(maxAlerts: 2, windowSeconds: 10))
        let first = [limiter.admit(now: t0), limiter.admit(now: t0), limiter.admit(now: t0)]
        #expect(first == [true, true, false])
        let summary = limiter.summaryDue(now: t0 + .seconds(10))
        #expect(summary == 1)
        let later = [limiter.admit(now: t0 + .seconds(10)), limiter.admit(now: t0 + .seconds(10))]
        #expect(later == [true, false], "the summary took one slot of two")
    }

    @Test("While a summary is pending, new notifications join it instead of alerting")
    func pendingJoins() {
        var limiter = BurstLimiter(limit: .init(maxAlerts: 1, windowSeconds: 10))
        let results = [limiter.admit(now: t0), limiter.admit(now: t0 + .seconds(1)), limiter.admit(now: t0 + .seconds(11))]
        #expect(results == [true, false, false], "the summary goes first")
        let summary = limiter.summaryDue(now: t0 + .seconds(11))
        #expect(summary == 2)
    }

    /// Found by the policy fuzzer: a window of 61e90 s passed the policy file and trapped when
    /// the limiter turned it into a Duration. The longest valid window still works.
    @Test("The longest window works; longer ones are not valid")
    func longestWindow() {
        var limiter = BurstLimiter(limit: .init(maxAlerts: 1, windowSeconds: BurstLimiter.Limit.maxWindowSeconds))
        #expect([limiter.admit(now: t0), limiter.admit(now: t0 + .seconds(86_399))] == [true, false])
        #expect(limiter.summaryDue(now: t0 + .seconds(86_400)) == 1)
        #expect(!BurstLimiter.Limit(maxAlerts: 1, windowSeconds: 61e90).isValid)
        #expect(!BurstLimiter.Limit(maxAlerts: 1, windowSeconds: 0).isValid)
        #expect(!BurstLimiter.Limit(maxAlerts: 0, windowSeconds: 60).isValid)
    }
}

/// The limiter driven as the daemon drives it: choose the step, then apply it.
extension BurstLimiter {
    mutating func admit(now: ContinuousClock.Instant) -> Bool {
        let step = step(forAlertAt: now)
        advance(step)
        return step != .heldBack
    }

    mutating func summaryDue(now: ContinuousClock.Instant) -> Int? {
        guard let summary = AlertPlanner.summary(burst: self, now: now) else { return nil }
        advance(summary.burst)
        return summary.count
    }
}
