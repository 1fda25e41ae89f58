/// The phone's side of ANCS (the specification's Notification Provider), for the simulated
/// iPhone and for tests: holds notifications, announces them, answers Control Point writes.
/// Pure: the driver carries the bytes.
public struct ANCSServer: Sendable {
    public enum Reply: Equatable, Sendable {
        /// The whole reply; the driver splits it into Data Source notifications.
        case dataSource([UInt8])
        /// A PerformNotificationAction the phone carried out; it gets no Data Source reply.
        case performed(uid: UInt32, ANCSActionID)
        /// The write fails with `error.attErrorCode`.
        case error(ANCSError)
    }

    public struct Entry: Equatable, Sendable {
        public var notification: ANCSNotification
        /// The last event announced for it: added or modified.
        public var eventID: ANCSEventID
    }

    public private(set) var notifications: [UInt32: Entry] = [:]
    /// Display names by app identifier, for GetAppAttributes.
    public var appNames: [String: String]

    public init(appNames: [String: String] = [:]) {
        self.appNames = appNames
    }

    /// Stores the notification and returns its Notification Source event: added for a new UID,
    /// modified for one already held.
    public mutating func post(_ notification: ANCSNotification, preExisting: Bool = false) -> [UInt8] {
        let eventID: ANCSEventID = notifications[notification.uid] == nil ? .added : .modified
        var flags = notification.flags
        if preExisting { flags.insert(.preExisting) }
        var stored = notification
        stored.flags = flags
        notifications[notification.uid] = Entry(notification: stored, eventID: eventID)
        return event(eventID, for: stored)
    }

    /// Forgets the notification and returns its removed event, or nil for an unknown UID.
    public mutating func remove(uid: UInt32) -> [UInt8]? {
        guard let entry = notifications.removeValue(forKey: uid) else { return nil }
        return event(.removed, for: entry.notification)
    }

    /// What an iPhone announces to an accessory that has just subscribed: every notification
    /// it holds as added and pre-existing, in UID order.
    public func announceAll() -> [[UInt8]] {
        notifications.keys.sorted().compactMap { uid in
            guard var notification = notifications[uid]?.notification else { return nil }
            notification.flags.insert(.preExisting)
            return event(.added, for: notification)
        }
    }

    private func event(_ eventID: ANCSEventID, for notification: ANCSNotification) -> [UInt8] {
        let count = notifications.values.count { $0.notification.category == notification.category }
        return ANCSNotificationSourceEvent(
            eventID: eventID, flags: notification.flags, category: notification.category,
            categoryCount: UInt8(clamping: count), uid: notification.uid
        ).bytes
    }

    public func handleControlPoint(_ bytes: [UInt8]) -> Reply {
        let request: ANCSControlPointRequest
        do {
            request = try ANCSControlPointRequest(bytes: bytes)
        } catch {
            return .error(error)
        }
        switch request {
        case .notificationAttributes(let uid, let attributes):
            guard let notification = notifications[uid]?.notification else {
                return .error(ANCSError(.invalidParameter, "no notification \(uid)"))
            }
            var out = [ANCSCommandID.getNotificationAttributes.rawValue] + ANCSBytes.le(uid)
            for attribute in attributes {
                let value = Self.value(of: attribute, in: notification)
                out += Self.attribute(attribute.id.rawValue, value, maxLength: attribute.maxLength)
            }
            return .dataSource(out)
        case .appAttributes(let appIdentifier, let attributes):
            guard let name = appNames[appIdentifier] else {
                return .error(ANCSError(.invalidParameter, "no app \(appIdentifier)"))
            }
            var out = [ANCSCommandID.getAppAttributes.rawValue] + Array(appIdentifier.utf8) + [0]
            for attribute in attributes {
                switch attribute {
                case .displayName: out += Self.attribute(attribute.rawValue, name, maxLength: nil)
                }
            }
            return .dataSource(out)
        case .performAction(let uid, let action):
            guard let notification = notifications[uid]?.notification else {
                return .error(ANCSError(.invalidParameter, "no notification \(uid)"))
            }
            guard notification.flags.contains(action.flag) else {
                return .error(ANCSError(.actionFailed, "notification \(uid) offers no \(action) action"))
            }
            return .performed(uid: uid, action)
        }
    }

    private static func value(of attribute: ANCSNotificationAttributeRequest, in notification: ANCSNotification) -> String {
        switch attribute {
        case .appIdentifier: notification.appIdentifier
        case .title: notification.title
        case .subtitle: notification.subtitle
        case .message: notification.message
        case .messageSize: String(notification.message.utf8.count)
        case .date: notification.date ?? ""
        case .positiveActionLabel: notification.positiveActionLabel ?? ""
        case .negativeActionLabel: notification.negativeActionLabel ?? ""
        }
    }

    /// `ID ‖ Length(LE) ‖ value`, cut to the requested maximum and to what a 16-bit length holds.
    private static func attribute(_ id: UInt8, _ value: String, maxLength: UInt16?) -> [UInt8] {
        let bytes = ANCSBytes.truncated(value, maxBytes: Int(maxLength ?? UInt16.max))
        return [id] + ANCSBytes.le(UInt16(bytes.count)) + bytes
    }
}
