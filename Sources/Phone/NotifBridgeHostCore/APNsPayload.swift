import Foundation

/// Turns an APNs JSON payload into what iOS would hand the data provider: the notification
/// (title, body, thread, actions, attributes) and its AlertingContext.
/// Pure: the clock, the categories and the localized strings come in as arguments.
public enum APNsPayload {
    /// APNs refuses larger payloads (VoIP pushes may be 5 KB; these are alerts).
    public static let maxPayloadLength = 4096
    /// The action iOS adds to every notification so it can be dismissed.
    public static let dismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

    public struct Context: Sendable {
        public var source: String
        public var sourceName: String
        public var id: String
        /// `UNNotificationCategory` actions by category identifier.
        public var categories: [String: [HostNotification.ActionInput]]
        /// Localizable.strings of the sending app, for the loc-key forms.
        public var strings: [String: String]
        /// A Focus is on: only time-sensitive and critical notifications alert.
        public var focus: Bool

        public init(source: String, sourceName: String, id: String, categories: [String: [HostNotification.ActionInput]] = [:], strings: [String: String] = [:], focus: Bool = false) {
            self.source = source
            self.sourceName = sourceName
            self.id = id
            self.categories = categories
            self.strings = strings
            self.focus = focus
        }
    }

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public struct Mapped: Sendable {
        public var notification: HostNotification
        public var alerting: HostAlerting
        /// `mutable-content: 1`: a notification service extension may rewrite it first.
        public var mutableContent: Bool
        public var operation: HostOperation { .add(notification, alerting) }
    }

    public static func map(_ data: Data, context: Context) throws(Invalid) -> Mapped {
        guard data.count <= maxPayloadLength else {
            throw Invalid("payload is \(data.count) bytes; APNs accepts at most \(maxPayloadLength)")
        }
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw Invalid("payload is not a JSON object") }
        guard let aps = top["aps"] as? [String: Any] else { throw Invalid("payload has no \"aps\" dictionary") }

        var notification = HostNotification(source: context.source, id: context.id, sourceName: context.sourceName)
        switch aps["alert"] {
        case let text as String:
            notification.body = text
        case let alert as [String: Any]:
            notification.title = try text(alert, key: "title", context: context)
            notification.subtitle = try text(alert, key: "subtitle", context: context)
            notification.body = try text(alert, key: "body", locKey: "loc-key", argsKey: "loc-args", context: context)
        case nil:
            if aps["content-available"] as? Int == 1 {
                throw Invalid("a background push (content-available without alert) shows nothing, so iOS forwards nothing")
            }
            throw Invalid("aps has no alert: nothing to show")
        default:
            throw Invalid("aps.alert must be a string or a dictionary")
        }
        guard notification.title != nil || notification.body != nil || notification.subtitle != nil else {
            throw Invalid("aps.alert has no title, subtitle or body")
        }
        notification.thread = aps["thread-id"] as? String
        var actions = [HostNotification.ActionInput]()
        if let category = aps["category"] as? String {
            guard let categoryActions = context.categories[category] else {
                throw Invalid("category \"\(category)\" is not in the categories file")
            }
            actions = categoryActions
        }
        actions.append(.init(id: dismissActionIdentifier, title: nil, type: .dismiss))
        notification.actions = actions

        var sound: HostAlerting.Sound?
        var criticalSound = false
        switch aps["sound"] {
        case is String:
            sound = .init(ignoreSilentMode: false)
        case let dictionary as [String: Any]:
            criticalSound = (dictionary["critical"] as? Int) == 1
            sound = .init(ignoreSilentMode: criticalSound)
        case nil:
            sound = nil
        default:
            throw Invalid("aps.sound must be a file name or a dictionary")
        }

        let level = aps["interruption-level"] as? String ?? (criticalSound ? "critical" : "active")
        var attributes: [HostNotification.AttributeInput] = []
        var shouldAlert = true
        switch level {
        case "passive": shouldAlert = false
        case "active": break
        case "time-sensitive": attributes.append(.timeSensitive)
        case "critical": attributes.append(.critical)
        default: throw Invalid("interruption-level \"\(level)\" is not passive, active, time-sensitive or critical")
        }
        notification.attributes = attributes.isEmpty ? nil : attributes
        let breaksThrough = level == "time-sensitive" || level == "critical"
        let suppressed = context.focus && shouldAlert && !breaksThrough
        let alerting = HostAlerting(
            shouldAlert: shouldAlert && !suppressed,
            canAlert: true,
            suppressedByFocus: suppressed,
            kind: .notification,
            sound: level == "passive" ? nil : sound
        )
        return Mapped(notification: notification, alerting: alerting, mutableContent: (aps["mutable-content"] as? Int) == 1)
    }

    /// A literal `key`, or its `<key>-loc-key` form filled from the strings table.
    private static func text(_ alert: [String: Any], key: String, locKey: String? = nil, argsKey: String? = nil, context: Context) throws(Invalid) -> String? {
        let locKey = locKey ?? "\(key)-loc-key"
        let argsKey = argsKey ?? "\(key)-loc-args"
        if let localized = alert[locKey] as? String {
            let format = context.strings[localized] ?? localized
            let arguments = (alert[argsKey] as? [Any])?.map { "\($0)" } ?? []
            return try fill(format, with: arguments, key: localized)
        }
        return alert[key] as? String
    }

    /// Replaces `%@` (in order) and `%n$@` (by position), and `%%`, as Foundation's format does.
    static func fill(_ format: String, with arguments: [String], key: String) throws(Invalid) -> String {
        var result = ""
        var next = 0
        var index = format.startIndex
        while index < format.endIndex {
            let character = format[index]
            index = format.index(after: index)
            guard character == "%", index < format.endIndex else {
                result.append(character)
                continue
            }
            if format[index] == "%" {
                result.append("%")
                index = format.index(after: index)
                continue
            }
            var digits = ""
            var cursor = index
            while cursor < format.endIndex, format[cursor].isASCII, format[cursor].isNumber {
                digits.append(format[cursor])
                cursor = format.index(after: cursor)
            }
            let position: Int
            if !digits.isEmpty, cursor < format.endIndex, format[cursor] == "$" {
                position = (Int(digits) ?? 0) - 1
                cursor = format.index(after: cursor)
            } else {
                position = next
                next += 1
                cursor = index
            }
            guard cursor < format.endIndex, format[cursor] == "@" else {
                throw Invalid("\"\(key)\" uses a format other than %@ or %n$@")
            }
            guard arguments.indices.contains(position) else {
                throw Invalid("\"\(key)\" needs argument \(position + 1) but loc-args has \(arguments.count)")
            }
            result += arguments[position]
            index = format.index(after: cursor)
        }
        return result
    }
}
