import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeDisplay
import NotifBridgeWire

/// A desktop banner for one stored notification, as the Mac accessory posts it through
/// `UNUserNotificationCenter`, and the way back: what the person does with the banner becomes
/// the control request the daemon sends to the iPhone. Pure, so both directions are tested on
/// Linux; the Mac adapter only copies fields into `UNMutableNotificationContent` and
/// `UNNotificationCategory`. Every text a peer wrote goes through `terminalSafe`, as on the
/// terminal: a banner shows no control characters, and a bidi override cannot reach past its
/// field into the app's name or the buttons.
public struct Banner: Sendable, Hashable {
    /// One button on the banner.
    public struct Button: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            case background
            /// A text field: `UNTextInputNotificationAction`.
            case textInput(placeholder: String)
        }

        /// The notification's action identifier, used as the banner action's identifier.
        public var identifier: String
        public var title: String
        public var kind: Kind
    }

    /// What the person did (`UNNotificationResponse`).
    public enum Interaction: Sendable, Hashable {
        /// Clicked the banner itself (`UNNotificationDefaultActionIdentifier`): nothing to send.
        case opened
        /// Closed it (`UNNotificationDismissActionIdentifier`).
        case dismissed
        /// Chose a button; `text` is what a text-input button carried.
        case action(identifier: String, text: String?)
    }

    /// Buttons a banner shows at most: macOS lists the first four of a category's actions in
    /// its menu, so more would be offered by the accessory and never reachable.
    public static let maxButtons = 4

    /// Unique per notification, so a later banner replaces an earlier one of the same notification
    /// and a removal can withdraw it.
    public var identifier: String
    /// One category per notification: its actions are the notification's own.
    public var categoryIdentifier: String
    public var title: String
    public var subtitle: String
    public var body: String
    public var threadIdentifier: String
    public var buttons: [Button]
    /// Whether closing the banner is sent to the iPhone: only when the notification has a
    /// dismiss action to send.
    public var sendsDismissal: Bool
    public var source: String
    public var id: String

    public init(_ record: StoredNotification) {
        let n = record.notification
        source = record.sourceIdentifier
        id = record.notificationIdentifier
        identifier = Self.identifier(source: source, id: id)
        categoryIdentifier = "notifbridge.category." + identifier
        title = terminalSafe(n.hasTitle ? n.title : n.sourceName)
        subtitle = n.hasSubtitle ? terminalSafe(n.subtitle) : ""
        body = n.hasBody ? terminalSafe(n.body.plainText, lineBreak: "\n") : ""
        threadIdentifier = n.hasThreadIdentifier ? n.threadIdentifier : source
        buttons = n.actions.compactMap { action -> Button? in
            let title = terminalSafe(action.hasTitle && !action.title.isEmpty ? action.title : action.identifier)
            switch action.type {
            case .background: return Button(identifier: action.identifier, title: title, kind: .background)
            case .textInput: return Button(identifier: action.identifier, title: title, kind: .textInput(placeholder: terminalSafe(action.placeholder)))
            case .dismiss, .unspecified, .UNRECOGNIZED: return nil
            }
        }.prefix(Self.maxButtons).map { $0 }
        sendsDismissal = n.actions.contains { $0.type == .dismiss }
    }

    /// The banner identifier of a notification: source and id, which together name it.
    public static func identifier(source: String, id: String) -> String {
        "\(source.utf8.count):\(source)/\(id)"
    }

    /// The request to send for what the person did; nil when there is nothing to send.
    public func request(for interaction: Interaction) -> ControlRequest? {
        switch interaction {
        case .opened:
            return nil
        case .dismissed:
            return sendsDismissal ? ControlRequest(op: .dismiss, source: source, id: id) : nil
        case .action(let identifier, let text):
            guard let button = buttons.first(where: { $0.identifier == identifier }) else { return nil }
            switch button.kind {
            case .background: return ControlRequest(op: .action, source: source, id: id, action: identifier)
            case .textInput: return ControlRequest(op: .reply, source: source, id: id, action: identifier, text: text ?? "")
            }
        }
    }
}
