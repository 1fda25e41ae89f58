import NotifBridgeAccessoryCore

/// One freedesktop desktop notification (`org.freedesktop.Notifications.Notify`) for a stored
/// notification, fitted to what the notification server says it can do, and the way back from
/// the server's signals to what the person did. Pure: the D-Bus sink only sends these fields and
/// turns the interactions into control requests with ``Banner/request(for:)``.
public struct DesktopNotificationPlan: Sendable, Hashable {
    /// The action key for a button: a prefix keeps the notification's own identifiers apart from
    /// the keys the specification and its extensions reserve (`default`, `inline-reply`).
    public static let buttonKeyPrefix = "button:"
    /// The action key of KDE's inline-reply extension; the server answers with
    /// `NotificationReplied(id, text)`.
    public static let inlineReplyKey = "inline-reply"
    public static let appName = "NotifBridge"

    public let banner: Banner
    public let summary: String
    public let body: String
    /// Key and label pairs, flattened as `Notify` takes them.
    public let actions: [String]
    /// The text-input button offered as the server's inline reply, if it has one.
    public let inlineReply: Banner.Button?
    /// 1 normal, 2 critical (the `urgency` hint).
    public let urgency: UInt8
    /// Milliseconds; 0 keeps it until acted on (calls, timers), -1 lets the server decide.
    public let expireTimeout: Int32

    /// `capabilities` is what `GetCapabilities` answered: without `actions` there are no
    /// buttons; without `inline-reply`, text-input actions are left out, since the person could
    /// not type an answer; with `body-markup`, the body is escaped so that peer text is never
    /// taken as markup.
    public init(_ record: StoredNotification, decision: AlertDecision?, capabilities: Set<String>) {
        banner = Banner(record)
        summary = banner.title
        let text = [banner.subtitle, banner.body].filter { !$0.isEmpty }.joined(separator: "\n")
        body = capabilities.contains("body-markup") ? Self.escapeMarkup(text) : text
        var actions: [String] = []
        var inlineReply: Banner.Button?
        if capabilities.contains("actions") {
            for button in banner.buttons {
                switch button.kind {
                case .background:
                    actions += [Self.buttonKeyPrefix + button.identifier, button.title]
                case .textInput:
                    guard inlineReply == nil, capabilities.contains("inline-reply") else { continue }
                    inlineReply = button
                    actions += [Self.inlineReplyKey, button.title]
                }
            }
        }
        self.actions = actions
        self.inlineReply = inlineReply
        urgency = decision?.urgent == true || decision?.persistent == true ? 2 : 1
        expireTimeout = decision?.persistent == true ? 0 : -1
    }

    /// The `a{sv}` hints, as key and value pairs.
    public var hints: [(String, HintValue)] {
        var hints: [(String, HintValue)] = [("urgency", .byte(urgency))]
        if let inlineReply, case .textInput(let placeholder) = inlineReply.kind, !placeholder.isEmpty {
            hints.append(("x-kde-reply-placeholder-text", .string(placeholder)))
        }
        return hints
    }

    public enum HintValue: Sendable, Hashable {
        case byte(UInt8)
        case string(String)
    }

    /// `ActionInvoked(id, key)`.
    public func interaction(actionKey: String) -> Banner.Interaction? {
        if actionKey == "default" { return .opened }
        guard actionKey.hasPrefix(Self.buttonKeyPrefix) else { return nil }
        return .action(identifier: String(actionKey.dropFirst(Self.buttonKeyPrefix.count)), text: nil)
    }

    /// `NotificationReplied(id, text)`.
    public func interaction(reply text: String) -> Banner.Interaction? {
        inlineReply.map { .action(identifier: $0.identifier, text: text) }
    }

    /// `NotificationClosed(id, reason)`: only 2, dismissed by the user, is the person's doing;
    /// 1 (expired), 3 (closed by us) and 4 (undefined) send nothing.
    public func interaction(closedReason reason: UInt32) -> Banner.Interaction? {
        reason == 2 ? .dismissed : nil
    }

    /// The five characters the specification's body markup gives meaning to, by Unicode scalar:
    /// by `Character`, a `<` or `&` followed by a combining mark is one that matches no case, and
    /// went out raw (markup the server could not parse, so a body it did not show).
    static func escapeMarkup(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
