// Stand-in for Apple's AccessoryNotifications (iOS 26.5): only what Apps/ uses, each
// declaration citing its page under https://developer.apple.com/documentation/accessorynotifications/
// (the A-keys of ../shared/reference/apple-api.md §12). Never shipped.
import AccessorySetupKit
import AccessoryTransportExtension
import ExtensionFoundation
import Foundation
import UniformTypeIdentifiers

/// …/accessorynotificationcenter
public final class AccessoryNotificationCenter {
    public init() {}
    /// …/accessorynotificationcenter/requestforwarding(for:)
    public func requestForwarding(for accessory: ASAccessory) async throws -> ForwardingDecision { .undetermined }
    /// …/accessorynotificationcenter/forwardingstatus(for:)
    public func forwardingStatus(for accessory: ASAccessory) async throws -> ForwardingDecision { .undetermined }
    /// …/accessorynotificationcenter/presentsettings(for:scenepersistentidentifier:)
    public func presentSettings(for accessory: ASAccessory, scenePersistentIdentifier: String? = nil) async throws -> ForwardingDecision { .undetermined }
}

/// …/forwardingdecision (…/allow, …/limited, …/deny, …/undetermined)
public enum ForwardingDecision: Codable, Hashable, Sendable, CustomStringConvertible {
    case allow, limited, deny, undetermined
    public var description: String { "\(self)" }
}

/// …/accessoryerror (the 26.5 cases)
public enum AccessoryError: Error, Codable, Hashable, Sendable {
    case unsupportedAccessory
    case unsupportedPlatform
    case accessoryNotificationsUnavailable
    case invalidNotificationResponse
    case coordinationTimeout
    case internalInconsistency
}

/// …/notificationsforwarding (a final class; conforms to `AppExtensionPoint.Capability`)
public final class NotificationsForwarding: AppExtensionPoint.Capability {
    /// …/notificationsforwarding/init(_:) (a handler factory)
    public init<Handler: AccessoryNotificationsHandler>(_ makeHandler: @escaping () -> Handler) {}

    /// …/notificationsforwarding/accessorynotificationshandler (26.5 names)
    public protocol AccessoryNotificationsHandler: Sendable {
        /// …/accessorynotificationshandler/didactivate(for:)
        func didActivate(for session: NotificationsForwarding.Session)
        /// …/accessorynotificationshandler/didinvalidate()
        func didInvalidate()
        /// …/accessorynotificationshandler/addnotification(_:alertingcontext:)
        func addNotification(_ notification: AccessoryNotification, alertingContext: AlertingContext) async throws -> Bool
        /// …/accessorynotificationshandler/updatenotification(_:)
        func updateNotification(_ notification: AccessoryNotification)
        /// …/accessorynotificationshandler/removenotification(identifier:)
        func removeNotification(identifier: AccessoryNotification.Identifier)
        /// …/accessorynotificationshandler/removeallnotifications()
        func removeAllNotifications()
        /// …/accessorynotificationshandler/messagehandler(_:) (`TransportMessage`, as on the symbol page)
        func messageHandler(_ message: TransportMessage)
    }

    /// …/notificationsforwarding/session
    public final class Session: @unchecked Sendable {
        /// …/accessoryfeaturesession/sessionid
        public var sessionID: UUID { UUID() }
        /// …/notificationsforwarding/session/send(message:)
        public func send(message: AccessoryMessage) async throws {}
        /// …/notificationsforwarding/session/sendresponse(_:)
        public func sendResponse(_ response: NotificationResponse) async throws {}
        /// …/notificationsforwarding/session/removenotifications(withidentifiers:sourceidentifier:)
        public func removeNotifications(withIdentifiers identifiers: [String], sourceIdentifier: String) async throws {}
    }
}

/// …/notificationresponse
public struct NotificationResponse: Sendable {
    /// …/notificationresponse/init(sourceidentifier:notificationidentifier:actionidentifier:usertext:)
    public init(sourceIdentifier: String, notificationIdentifier: String, actionIdentifier: String, userText: String?) {
        self.sourceIdentifier = sourceIdentifier
        self.notificationIdentifier = notificationIdentifier
        self.actionIdentifier = actionIdentifier
        self.userText = userText
    }
    /// …/notificationresponse/sourceidentifier
    public var sourceIdentifier: String
    /// …/notificationresponse/notificationidentifier
    public var notificationIdentifier: String
    /// …/notificationresponse/actionidentifier
    public var actionIdentifier: String
    /// …/notificationresponse/usertext
    public var userText: String?
}

/// …/accessorynotification
public struct AccessoryNotification {
    /// …/accessorynotification/identifier-swift.struct
    public struct Identifier: Hashable, Sendable {
        /// …/identifier-swift.struct/sourceidentifier
        public var sourceIdentifier: String
        /// …/identifier-swift.struct/notificationidentifier
        public var notificationIdentifier: String
    }

    /// …/accessorynotification/displaydate-swift.enum
    public enum DisplayDate {
        case deliveryDate
        case contentDate(Date)
        case allDayDate(Date)
        case hideDate
    }

    /// …/accessorynotification/attributes-swift.struct (…/critical, …/timesensitive, …/priority)
    public struct Attributes: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// …/attributes-swift.struct/timesensitive (raw values undocumented; these are not the SDK's)
        public static let timeSensitive = Attributes(rawValue: 1 << 0)
        /// …/attributes-swift.struct/critical
        public static let critical = Attributes(rawValue: 1 << 1)
        /// …/attributes-swift.struct/priority
        public static let priority = Attributes(rawValue: 1 << 2)
    }

    /// …/accessorynotification/action
    public struct Action {
        /// …/action/actiontype (…/dismiss, …/background, …/textinput(placeholder:))
        public enum ActionType {
            case dismiss
            case background
            case textInput(placeholder: String)
        }
        /// …/action/identifier
        public var identifier: String
        /// …/action/title
        public var title: String?
        /// …/action/type
        public var type: ActionType
    }

    /// …/accessorynotification/file
    public struct File {
        /// …/file/url (ephemeral: read it now)
        public var url: URL { get async throws { URL(fileURLWithPath: "/") } }
        /// …/file/type
        public var type: UTType
    }

    /// …/accessorynotification/identifier-swift.property
    public var identifier: Identifier
    /// …/accessorynotification/sourcename
    public var sourceName: String
    /// …/accessorynotification/title
    public var title: String?
    /// …/accessorynotification/subtitle
    public var subtitle: String?
    /// …/accessorynotification/body (`NSAttributedString?`, not `AttributedString`)
    public var body: NSAttributedString?
    /// …/accessorynotification/summary
    public var summary: NSAttributedString?
    /// …/accessorynotification/threadidentifier
    public var threadIdentifier: String?
    /// …/accessorynotification/deliverydate
    public var deliveryDate: Date
    /// …/accessorynotification/displaydate-swift.property
    public var displayDate: DisplayDate
    /// …/accessorynotification/attributes-swift.property
    public var attributes: Attributes
    /// …/accessorynotification/actions
    public var actions: [Action]
    /// …/accessorynotification/sourceicon
    public var sourceIcon: File?
    /// …/accessorynotification/contexticon
    public var contextIcon: File?
    /// …/accessorynotification/attachments
    public var attachments: [File]
}

/// …/alertingcontext
public struct AlertingContext {
    /// …/alertingcontext/kind-swift.enum (…/incomingcall, …/timer; `.activeCall` is iOS 27.3+,
    /// so the adapter treats unknown kinds as notifications)
    public enum Kind {
        case notification, incomingCall, timer
    }

    /// …/alertingcontext/sound-swift.struct
    public struct Sound {
        /// …/alertingcontext/sound-swift.struct/shouldignoresilentmode
        public var shouldIgnoreSilentMode: Bool
    }

    /// …/alertingcontext/shouldalert
    public var shouldAlert: Bool { notificationCanAlert && !isSuppressedByFocus }
    /// …/alertingcontext/notificationcanalert
    public var notificationCanAlert: Bool
    /// …/alertingcontext/issuppressedbyfocus
    public var isSuppressedByFocus: Bool
    /// …/alertingcontext/kind-swift.property
    public var kind: Kind
    /// …/alertingcontext/sound-swift.property
    public var sound: Sound?
}
