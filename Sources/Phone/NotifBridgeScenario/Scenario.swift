import Foundation
import NotifBridgeHostCore

/// A timeline for the simulated iPhone and what the accessory must hold once it has played:
/// the format of `Scenarios/*.yaml` and `notifbridge phone play`.
public struct Scenario: Sendable {
    public var name: String
    public var summary: String?
    /// The source (bundle identifier) and app name of notifications that name none.
    public var source: String
    public var app: String
    public var steps: [Step]
    public var expect: Expectations

    public static let defaultSource = "com.apple.MobileSMS"
    public static let defaultApp = "Messages"

    /// Whether playing it needs a way to restart the accessory.
    public var restartsAccessory: Bool {
        steps.contains { if case .restartAccessory = $0 { true } else { false } }
    }
}

/// One data-provider call.
public enum OperationSpec: Sendable, Hashable {
    case add(NotificationSpec)
    case update(NotificationSpec)
    case remove(NotificationRef)
    case removeAll
}

public enum Step: Sendable, Hashable {
    case operation(OperationSpec)
    /// A Focus turns on or off: while on, only time-sensitive and critical notifications alert.
    case focus(Bool)
    /// The link drops. With `during`, that call is numbered and its first chunk written just
    /// before the drop, so the accessory holds a partial message when the link goes.
    case disconnect(during: OperationSpec?)
    case reconnect
    /// The accessory process stops and starts again on the same state (the link drops too).
    case restartAccessory
    /// The calls are numbered in the order given and put on the link in reverse order.
    case reorder([OperationSpec])
    /// Wait until the accessory has acknowledged everything sent so far.
    case settle
    case wait(seconds: Double)
}

public struct NotificationRef: Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var id: String

    public init(source: String, id: String) {
        self.source = source
        self.id = id
    }

    public var description: String { "\(source)/\(id)" }
}

/// A notification as a scenario writes it; unnamed fields take the scenario's defaults.
public struct NotificationSpec: Sendable, Hashable {
    public enum Level: String, Sendable, Hashable, CaseIterable {
        case passive, active
        case timeSensitive = "time-sensitive"
        case critical
    }

    public var ref: NotificationRef
    public var app: String
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var thread: String?
    public var level: Level
    public var kind: HostAlerting.Kind
    /// A synthetic attachment of this many bytes, to make a message span many chunks.
    public var attachmentBytes: Int?

    public init(ref: NotificationRef, app: String, title: String? = nil, subtitle: String? = nil, body: String? = nil, thread: String? = nil, level: Level = .active, kind: HostAlerting.Kind = .notification, attachmentBytes: Int? = nil) {
        self.ref = ref
        self.app = app
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.thread = thread
        self.level = level
        self.kind = kind
        self.attachmentBytes = attachmentBytes
    }

    /// What the data provider receives: the notification, and for an add its alerting
    /// context as iOS computes it with or without a Focus.
    public func notification() -> HostNotification {
        var notification = HostNotification(source: ref.source, id: ref.id, sourceName: app, title: title, subtitle: subtitle, body: body, thread: thread)
        switch level {
        case .timeSensitive: notification.attributes = [.timeSensitive]
        case .critical: notification.attributes = [.critical]
        case .passive, .active: break
        }
        if let attachmentBytes {
            let bytes = (0..<attachmentBytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            notification.attachments = [.init(type: "public.data", base64: Data(bytes).base64EncodedString())]
        }
        return notification
    }

    public func alerting(focus: Bool) -> HostAlerting {
        let wantsAlert = level != .passive
        let breaksThrough = level == .timeSensitive || level == .critical || kind == .incomingCall
        let suppressed = focus && wantsAlert && !breaksThrough
        return HostAlerting(
            shouldAlert: wantsAlert && !suppressed,
            canAlert: true,
            suppressedByFocus: suppressed,
            kind: kind,
            sound: wantsAlert ? .init(ignoreSilentMode: level == .critical) : nil
        )
    }
}

extension OperationSpec {
    public func operation(focus: Bool) -> HostOperation {
        switch self {
        case .add(let spec): .add(spec.notification(), spec.alerting(focus: focus))
        case .update(let spec): .update(spec.notification())
        case .remove(let ref): .remove(source: ref.source, id: ref.id)
        case .removeAll: .removeAll
        }
    }
}

/// What the accessory must hold once the scenario has played.
public struct Expectations: Sendable, Hashable {
    public struct Present: Sendable, Hashable {
        public var ref: NotificationRef
        public var title: String?
        public var body: String?

        public init(ref: NotificationRef, title: String? = nil, body: String? = nil) {
            self.ref = ref
            self.title = title
            self.body = body
        }
    }

    public init() {}

    /// Shown on the accessory (stored and not removed), with these fields when given.
    public var present: [Present] = []
    /// Not shown: removed, refused, or never delivered.
    public var absent: [NotificationRef] = []
    public var alerted: [NotificationRef] = []
    public var notAlerted: [NotificationRef] = []
    /// How many notifications the accessory shows in all.
    public var count: Int?
}

/// A notification as the accessory shows it, for checking expectations.
public struct ObservedNotification: Sendable, Hashable {
    public var ref: NotificationRef
    public var title: String?
    public var body: String?
    public var alerted: Bool

    public init(ref: NotificationRef, title: String?, body: String?, alerted: Bool) {
        self.ref = ref
        self.title = title
        self.body = body
        self.alerted = alerted
    }
}

extension Expectations {
    /// Every way `observed` differs from the expectations; empty when they hold.
    public func failures(in observed: [ObservedNotification]) -> [String] {
        let shown = Dictionary(observed.map { ($0.ref, $0) }, uniquingKeysWith: { first, _ in first })
        var failures: [String] = []
        for expected in present {
            guard let found = shown[expected.ref] else {
                failures.append("\(expected.ref) should be shown but is not")
                continue
            }
            if let title = expected.title, found.title != title {
                failures.append("\(expected.ref) has title \(found.title.map { "\"\($0)\"" } ?? "none"), expected \"\(title)\"")
            }
            if let body = expected.body, found.body != body {
                failures.append("\(expected.ref) has body \(found.body.map { "\"\($0)\"" } ?? "none"), expected \"\(body)\"")
            }
        }
        for ref in absent where shown[ref] != nil {
            failures.append("\(ref) should not be shown but is")
        }
        for ref in alerted where shown[ref]?.alerted != true {
            failures.append(shown[ref] == nil ? "\(ref) should have alerted but is not shown" : "\(ref) should have alerted but did not")
        }
        for ref in notAlerted where shown[ref]?.alerted == true {
            failures.append("\(ref) alerted but should not have")
        }
        if let count, observed.count != count {
            failures.append("the accessory shows \(observed.count) notification(s), expected \(count)")
        }
        return failures
    }
}
