import NotifBridgeWire

/// One GATT notification on the Notification Source: always 8 bytes, UID little-endian.
public struct ANCSNotificationSourceEvent: Equatable, Sendable {
    public static let length = 8

    public var eventID: ANCSEventID
    public var flags: ANCSEventFlags
    public var category: ANCSCategory
    /// Active notifications in this category, this one included.
    public var categoryCount: UInt8
    public var uid: UInt32

    public init(eventID: ANCSEventID, flags: ANCSEventFlags, category: ANCSCategory, categoryCount: UInt8, uid: UInt32) {
        self.eventID = eventID
        self.flags = flags
        self.category = category
        self.categoryCount = categoryCount
        self.uid = uid
    }

    public init(bytes: [UInt8]) throws(ANCSError) {
        guard bytes.count == Self.length else {
            throw ANCSError(.malformed, "notification source event of \(bytes.count) bytes; it is \(Self.length)")
        }
        guard let eventID = ANCSEventID(rawValue: bytes[0]) else {
            throw ANCSError(.malformed, "unknown EventID \(bytes[0])")
        }
        self.eventID = eventID
        flags = ANCSEventFlags(rawValue: bytes[1])
        category = ANCSCategory(wireValue: bytes[2])
        categoryCount = bytes[3]
        uid = ANCSBytes.uint32(bytes[4...])
    }

    public var bytes: [UInt8] {
        [eventID.rawValue, flags.rawValue, category.rawValue, categoryCount] + ANCSBytes.le(uid)
    }
}

/// A write to the Control Point. The accessory builds them; the simulated phone parses them.
public enum ANCSControlPointRequest: Equatable, Sendable {
    case notificationAttributes(uid: UInt32, [ANCSNotificationAttributeRequest])
    case appAttributes(appIdentifier: String, [ANCSAppAttributeID])
    case performAction(uid: UInt32, ANCSActionID)

    public var commandID: ANCSCommandID {
        switch self {
        case .notificationAttributes: .getNotificationAttributes
        case .appAttributes: .getAppAttributes
        case .performAction: .performNotificationAction
        }
    }

    public var bytes: [UInt8] {
        var out = [commandID.rawValue]
        switch self {
        case .notificationAttributes(let uid, let attributes):
            out += ANCSBytes.le(uid)
            for attribute in attributes {
                out.append(attribute.id.rawValue)
                if let length = attribute.maxLength { out += ANCSBytes.le(length) }
            }
        case .appAttributes(let appIdentifier, let attributes):
            out += Array(appIdentifier.utf8) + [0]
            out += attributes.map(\.rawValue)
        case .performAction(let uid, let action):
            out += ANCSBytes.le(uid) + [action.rawValue]
        }
        return out
    }

    /// Parses a write as the phone does, failing with the ATT error the specification names.
    public init(bytes: [UInt8]) throws(ANCSError) {
        guard bytes.count <= WireLimits.maxAttributeValueLength else {
            throw ANCSError(.invalidCommand, "control point write of \(bytes.count) bytes exceeds maxAttributeValueLength \(WireLimits.maxAttributeValueLength)")
        }
        guard let first = bytes.first else { throw ANCSError(.invalidCommand, "empty control point write") }
        guard let command = ANCSCommandID(rawValue: first) else { throw ANCSError(.unknownCommand, "CommandID \(first)") }
        var rest = bytes.dropFirst()
        switch command {
        case .getNotificationAttributes:
            guard rest.count >= 4 else { throw ANCSError(.invalidCommand, "GetNotificationAttributes without a full NotificationUID") }
            let uid = ANCSBytes.uint32(rest)
            rest = rest.dropFirst(4)
            var attributes: [ANCSNotificationAttributeRequest] = []
            while let raw = rest.popFirst() {
                guard let id = ANCSNotificationAttributeID(rawValue: raw) else {
                    throw ANCSError(.invalidParameter, "NotificationAttributeID \(raw)")
                }
                var length: UInt16 = 0
                if id.needsMaxLength {
                    guard rest.count >= 2 else { throw ANCSError(.invalidCommand, "attribute \(raw) without its 2-byte maximum length") }
                    length = ANCSBytes.uint16(rest)
                    rest = rest.dropFirst(2)
                }
                attributes.append(Self.attribute(id, maxLength: length))
            }
            self = .notificationAttributes(uid: uid, attributes)
        case .getAppAttributes:
            guard let nul = rest.firstIndex(of: 0) else { throw ANCSError(.invalidCommand, "AppIdentifier without its NUL terminator") }
            let appIdentifier = String(decoding: rest[..<nul], as: UTF8.self)
            var attributes: [ANCSAppAttributeID] = []
            for raw in rest[(nul + 1)...] {
                guard let id = ANCSAppAttributeID(rawValue: raw) else { throw ANCSError(.invalidParameter, "AppAttributeID \(raw)") }
                attributes.append(id)
            }
            self = .appAttributes(appIdentifier: appIdentifier, attributes)
        case .performNotificationAction:
            guard rest.count == 5 else { throw ANCSError(.invalidCommand, "PerformNotificationAction of \(bytes.count) bytes; it is 6") }
            let uid = ANCSBytes.uint32(rest)
            let raw = rest[rest.startIndex + 4]
            guard let action = ANCSActionID(rawValue: raw) else { throw ANCSError(.invalidParameter, "ActionID \(raw)") }
            self = .performAction(uid: uid, action)
        }
    }

    private static func attribute(_ id: ANCSNotificationAttributeID, maxLength: UInt16) -> ANCSNotificationAttributeRequest {
        switch id {
        case .appIdentifier: .appIdentifier
        case .title: .title(maxLength: maxLength)
        case .subtitle: .subtitle(maxLength: maxLength)
        case .message: .message(maxLength: maxLength)
        case .messageSize: .messageSize
        case .date: .date
        case .positiveActionLabel: .positiveActionLabel
        case .negativeActionLabel: .negativeActionLabel
        }
    }
}

/// A notification whose attributes are complete, as the accessory reports it.
public struct ANCSNotification: Equatable, Sendable {
    public var uid: UInt32
    public var flags: ANCSEventFlags
    public var category: ANCSCategory
    public var appIdentifier: String
    /// The app's display name; nil when the phone would not give it.
    public var appName: String?
    public var title: String
    public var subtitle: String
    public var message: String
    /// As the phone sends it, `yyyyMMdd'T'HHmmSS` in the phone's local time; nil when absent.
    public var date: String?
    /// Present only when the flags offer the action and the phone named it.
    public var positiveActionLabel: String?
    public var negativeActionLabel: String?

    public init(
        uid: UInt32, flags: ANCSEventFlags = [], category: ANCSCategory = .other, appIdentifier: String, appName: String? = nil,
        title: String = "", subtitle: String = "", message: String = "", date: String? = nil,
        positiveActionLabel: String? = nil, negativeActionLabel: String? = nil
    ) {
        self.uid = uid
        self.flags = flags
        self.category = category
        self.appIdentifier = appIdentifier
        self.appName = appName
        self.title = title
        self.subtitle = subtitle
        self.message = message
        self.date = date
        self.positiveActionLabel = positiveActionLabel
        self.negativeActionLabel = negativeActionLabel
    }
}

/// Little-endian integers and bounded UTF-8, as ANCS carries them.
enum ANCSBytes {
    static func le(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
    }

    static func le(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }

    /// The first four bytes, little-endian; the caller has checked there are four.
    static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        let start = bytes.startIndex
        return (0..<4).reduce(0) { $0 | UInt32(bytes[start + $1]) << (8 * $1) }
    }

    static func uint16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        UInt16(bytes[bytes.startIndex]) | UInt16(bytes[bytes.startIndex + 1]) << 8
    }

    /// Decodes UTF-8, repairing invalid sequences with U+FFFD, then drops whole characters from
    /// the end until it fits `maxBytes`: a repair can make the text longer than its bytes were.
    static func string(_ bytes: some Collection<UInt8>, maxBytes: Int) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        while text.utf8.count > maxBytes { text.removeLast() }
        return text
    }

    /// The longest prefix of `text` that fits `maxBytes` without splitting a character: what a
    /// phone does when a value is longer than the requested maximum.
    static func truncated(_ text: String, maxBytes: Int) -> [UInt8] {
        string(Array(text.utf8), maxBytes: maxBytes).utf8.map { $0 }
    }
}
