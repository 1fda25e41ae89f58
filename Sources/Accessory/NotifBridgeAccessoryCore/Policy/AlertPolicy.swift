import NotifBridgeWire

/// What the accessory does for one new notification.
public struct AlertDecision: Codable, Sendable, Hashable {
    public enum Presentation: String, Codable, Sendable {
        /// Show it now (banner, wake the screen).
        case alert
        /// Keep it in the list only.
        case list
    }

    public enum Sound: String, Codable, Sendable { case none, normal, evenInSilentMode }
    public enum Haptic: String, Codable, Sendable { case none, tap, double, long, ring }

    public var presentation: Presentation
    public var sound: Sound
    public var haptic: Haptic
    /// Stays on screen until acted on (calls, critical alerts, timers).
    public var persistent: Bool
    /// Why, in words for logs and the policy command; never notification content.
    public var reason: String
    /// Calls, timers, critical and time-sensitive alerts: what a person must not miss because
    /// other notifications arrived in a burst.
    public var urgent: Bool
    /// Would have alerted, but the burst limit held it back: it is counted into the next
    /// summary alert instead.
    public var coalesced: Bool

    public init(presentation: Presentation, sound: Sound, haptic: Haptic, persistent: Bool, reason: String, urgent: Bool = false, coalesced: Bool = false) {
        self.presentation = presentation
        self.sound = sound
        self.haptic = haptic
        self.persistent = persistent
        self.reason = reason
        self.urgent = urgent
        self.coalesced = coalesced
    }

    private enum CodingKeys: String, CodingKey { case presentation, sound, haptic, persistent, reason, urgent, coalesced }

    /// Decisions stored before `urgent` or `coalesced` existed read as neither.
    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        presentation = try container.decode(Presentation.self, forKey: .presentation)
        sound = try container.decode(Sound.self, forKey: .sound)
        haptic = try container.decode(Haptic.self, forKey: .haptic)
        persistent = try container.decode(Bool.self, forKey: .persistent)
        reason = try container.decode(String.self, forKey: .reason)
        urgent = try container.decodeIfPresent(Bool.self, forKey: .urgent) ?? false
        coalesced = try container.decodeIfPresent(Bool.self, forKey: .coalesced) ?? false
    }

    /// `coalesced` only when set, so a decision prints (`notifbridge policy`) as it always has.
    public func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(presentation, forKey: .presentation)
        try container.encode(sound, forKey: .sound)
        try container.encode(haptic, forKey: .haptic)
        try container.encode(persistent, forKey: .persistent)
        try container.encode(reason, forKey: .reason)
        try container.encode(urgent, forKey: .urgent)
        if coalesced { try container.encode(coalesced, forKey: .coalesced) }
    }

    public var alerts: Bool { presentation == .alert }

    static func list(_ reason: String, persistent: Bool = false) -> AlertDecision {
        AlertDecision(presentation: .list, sound: .none, haptic: .none, persistent: persistent, reason: reason)
    }

    /// Urgent alerts alert even when the burst limit is reached.
    public var bypassesBurstLimit: Bool { presentation == .alert && urgent }

    /// The same notification, held back because too many alerted just now.
    func heldBack() -> AlertDecision {
        AlertDecision(presentation: .list, sound: .none, haptic: .none, persistent: false, reason: "part of a burst; counted in the next summary alert", coalesced: true)
    }
}

/// Everything the policy looks at, taken from the notification and its AlertingContext.
public struct AlertInput: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case notification, incomingCall, timer, activeCall, unknown }

    public var shouldAlert: Bool
    public var canAlert: Bool
    public var suppressedByFocus: Bool
    public var kind: Kind
    /// nil: the notification has no sound.
    public var ignoresSilentMode: Bool?
    public var critical: Bool
    public var timeSensitive: Bool
    public var source: String
    public var title: String
    public var body: String
    /// Local time, minutes after midnight (0...1439): an input, so the policy reads no clock.
    public var minuteOfDay: Int

    public init(shouldAlert: Bool, canAlert: Bool = true, suppressedByFocus: Bool = false, kind: Kind = .notification, ignoresSilentMode: Bool? = false, critical: Bool = false, timeSensitive: Bool = false, source: String = "com.example.app", title: String = "", body: String = "", minuteOfDay: Int = 12 * 60) {
        self.shouldAlert = shouldAlert
        self.canAlert = canAlert
        self.suppressedByFocus = suppressedByFocus
        self.kind = kind
        self.ignoresSilentMode = ignoresSilentMode
        self.critical = critical
        self.timeSensitive = timeSensitive
        self.source = source
        self.title = title
        self.body = body
        self.minuteOfDay = minuteOfDay
    }

    public init(_ add: Notifbridge_V1_AddNotification, minuteOfDay: Int) {
        let context = add.alerting
        let kind: Kind = switch context.kind {
        case .notification: .notification
        case .incomingCall: .incomingCall
        case .timer: .timer
        case .activeCall: .activeCall
        case .unspecified, .UNRECOGNIZED: .unknown
        }
        let attributes = add.notification.attributes
        self.init(
            shouldAlert: context.shouldAlert,
            canAlert: context.notificationCanAlert,
            suppressedByFocus: context.suppressedByFocus,
            kind: kind,
            ignoresSilentMode: context.hasSound ? context.sound.ignoreSilentMode : nil,
            critical: attributes & UInt32(Notifbridge_V1_Attribute.critical.rawValue) != 0,
            timeSensitive: attributes & UInt32(Notifbridge_V1_Attribute.timeSensitive.rawValue) != 0,
            source: add.notification.id.sourceIdentifier,
            title: add.notification.title,
            body: add.notification.body.plainText,
            minuteOfDay: minuteOfDay
        )
    }
}

/// The alert policy (docs/POLICY in README): iOS's own decision first, then the accessory
/// owner's settings. Pure, so every combination is a row in a table test.
public enum AlertPolicy {
    public static func decide(_ input: AlertInput, settings: AlertSettings) -> AlertDecision {
        if input.kind == .activeCall {
            return .list("an active call is a status, not an alert", persistent: true)
        }
        let urgent = input.critical || input.ignoresSilentMode == true
        if urgent {
            // Critical alerts break through Focus, as on the iPhone, but not an explicit "no".
            guard input.shouldAlert || (input.canAlert && input.suppressedByFocus) else {
                return .list("critical, but iOS did not allow it to alert")
            }
            return AlertDecision(presentation: .alert, sound: input.ignoresSilentMode == nil ? .none : .evenInSilentMode, haptic: .long, persistent: true, reason: "critical alert", urgent: true)
        }
        guard input.shouldAlert else {
            if input.suppressedByFocus { return .list("silenced by the iPhone's Focus") }
            return .list(input.canAlert ? "iOS chose not to alert" : "already alerted elsewhere, or alerts are off for this app")
        }
        let keywordAlert = settings.keywords.first { $0.action == .alert && $0.matches(title: input.title, body: input.body) }
        if keywordAlert == nil {
            if settings.mutedApps.contains(input.source) { return .list("app is muted on this accessory") }
            if let rule = settings.keywords.first(where: { $0.action == .mute && $0.matches(title: input.title, body: input.body) }) {
                return .list("muted by keyword rule \"\(rule.match)\"")
            }
            let exempt = input.timeSensitive || input.kind == .incomingCall || input.kind == .timer || settings.allowedApps.contains(input.source)
            if let quiet = settings.quietHours, quiet.contains(minuteOfDay: input.minuteOfDay), !exempt {
                return .list("quiet hours \(quiet.start)–\(quiet.end)")
            }
        }
        let sound: AlertDecision.Sound = input.ignoresSilentMode == nil || settings.silentMode ? .none : .normal
        let haptic: AlertDecision.Haptic = switch input.kind {
        case .incomingCall: .ring
        case .timer: .long
        case .notification, .unknown, .activeCall: input.timeSensitive ? .double : .tap
        }
        var reason = keywordAlert.map { "alert by keyword rule \"\($0.match)\"" } ?? "iOS recommends alerting"
        if input.kind == .unknown { reason += " (unknown kind, treated as a notification)" }
        let ringsUntilAnswered = input.kind == .incomingCall || input.kind == .timer
        return AlertDecision(presentation: .alert, sound: sound, haptic: haptic, persistent: ringsUntilAnswered, reason: reason, urgent: ringsUntilAnswered || input.timeSensitive)
    }
}
