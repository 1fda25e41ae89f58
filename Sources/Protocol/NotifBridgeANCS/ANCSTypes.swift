/// The Apple Notification Center Service's GATT identifiers, as lowercase canonical strings
/// (BlueZ reports UUIDs in lowercase).
public enum ANCSUUID {
    public static let service = "7905f431-b5ce-4e99-a40f-4b1e122d00d0"
    /// Notify: one 8-byte `ANCSNotificationSourceEvent` per notification.
    public static let notificationSource = "9fbf120d-6301-42d9-8c58-25e699a21dbd"
    /// Write with response: `ANCSControlPointRequest`s.
    public static let controlPoint = "69d1d8f3-45e1-49a8-9821-9bbdfdaad9d9"
    /// Notify: replies to Control Point requests, split across as many notifications as needed.
    public static let dataSource = "22eac6e9-24d6-4bb5-be44-b36ace7c7bfb"
}

/// What happened to a notification on the phone.
public enum ANCSEventID: UInt8, Sendable, CaseIterable {
    case added = 0
    case modified = 1
    case removed = 2
}

/// EventFlags of a Notification Source event.
public struct ANCSEventFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let silent = ANCSEventFlags(rawValue: 1 << 0)
    public static let important = ANCSEventFlags(rawValue: 1 << 1)
    /// The notification existed before the accessory connected.
    public static let preExisting = ANCSEventFlags(rawValue: 1 << 2)
    public static let positiveAction = ANCSEventFlags(rawValue: 1 << 3)
    public static let negativeAction = ANCSEventFlags(rawValue: 1 << 4)
}

/// CategoryID. The specification reserves the values above `entertainment`; a phone may send
/// them, so they read as `.other` rather than failing the event.
public enum ANCSCategory: UInt8, Sendable, CaseIterable {
    case other = 0
    case incomingCall
    case missedCall
    case voicemail
    case social
    case schedule
    case email
    case news
    case healthAndFitness
    case businessAndFinance
    case location
    case entertainment

    /// Reserved values become `.other`.
    public init(wireValue: UInt8) {
        self = ANCSCategory(rawValue: wireValue) ?? .other
    }
}

/// CommandID: the first byte of every Control Point request and Data Source reply.
public enum ANCSCommandID: UInt8, Sendable, CaseIterable {
    case getNotificationAttributes = 0
    case getAppAttributes = 1
    case performNotificationAction = 2
}

/// NotificationAttributeID.
public enum ANCSNotificationAttributeID: UInt8, Sendable, CaseIterable {
    case appIdentifier = 0
    case title = 1
    case subtitle = 2
    case message = 3
    case messageSize = 4
    case date = 5
    case positiveActionLabel = 6
    case negativeActionLabel = 7

    /// Title, subtitle and message must be requested with a maximum length.
    public var needsMaxLength: Bool {
        self == .title || self == .subtitle || self == .message
    }
}

/// AppAttributeID.
public enum ANCSAppAttributeID: UInt8, Sendable, CaseIterable {
    case displayName = 0
}

/// ActionID of a PerformNotificationAction request.
public enum ANCSActionID: UInt8, Sendable, CaseIterable {
    case positive = 0
    case negative = 1

    /// The event flag that says the notification offers this action.
    public var flag: ANCSEventFlags {
        self == .positive ? .positiveAction : .negativeAction
    }
}

/// One attribute asked for in GetNotificationAttributes; the ones the specification requires a
/// maximum length for carry it (in bytes).
public enum ANCSNotificationAttributeRequest: Hashable, Sendable {
    case appIdentifier
    case title(maxLength: UInt16)
    case subtitle(maxLength: UInt16)
    case message(maxLength: UInt16)
    case messageSize
    case date
    case positiveActionLabel
    case negativeActionLabel

    public var id: ANCSNotificationAttributeID {
        switch self {
        case .appIdentifier: .appIdentifier
        case .title: .title
        case .subtitle: .subtitle
        case .message: .message
        case .messageSize: .messageSize
        case .date: .date
        case .positiveActionLabel: .positiveActionLabel
        case .negativeActionLabel: .negativeActionLabel
        }
    }

    public var maxLength: UInt16? {
        switch self {
        case .title(let length), .subtitle(let length), .message(let length): length
        default: nil
        }
    }
}
