import Foundation
import NotifBridgeWire

/// Turns what the ANCS client reports into the accessory's own events, so an ANCS notification
/// reaches the same store, ledger and alert planner as one from the AccessoryNotifications link.
public enum ANCSMapping {
    public static let positiveActionIdentifier = "ancs.positive"
    public static let negativeActionIdentifier = "ancs.negative"

    /// What every notification identifier this mapping makes starts with.
    public static let identifierPrefix = "ancs:"

    /// The `notification_identifier` an ANCS UID becomes; the app identifier is the source.
    public static func notificationIdentifier(uid: UInt32) -> String { identifierPrefix + String(uid) }

    /// The event for a client action; nil for the actions that are not notifications (writes,
    /// refusals). `sequence` is the caller's, as for any HostEvent.
    public static func event(for action: ANCSClient.Action, sequence: UInt64, receivedAt: Date, timeZone: TimeZone) -> HostEvent? {
        var event = HostEvent()
        event.sequence = sequence
        switch action {
        case .added(let notification):
            var add = Notifbridge_V1_AddNotification()
            add.notification = wireNotification(notification, receivedAt: receivedAt, timeZone: timeZone)
            add.alerting = alerting(notification)
            event.event = .add(add)
        case .modified(let notification):
            var update = Notifbridge_V1_UpdateNotification()
            update.notification = wireNotification(notification, receivedAt: receivedAt, timeZone: timeZone)
            event.event = .update(update)
        case .removed(let uid, let appIdentifier):
            var remove = Notifbridge_V1_RemoveNotification()
            remove.id = WireNotificationID(source: appIdentifier, notification: notificationIdentifier(uid: uid))
            event.event = .remove(remove)
        case .writeControlPoint, .refused:
            return nil
        }
        return event
    }

    /// The ANCS action an accessory response names, or nil for any other identifier.
    public static func actionID(forIdentifier identifier: String) -> ANCSActionID? {
        switch identifier {
        case positiveActionIdentifier: .positive
        case negativeActionIdentifier: .negative
        default: nil
        }
    }

    /// The UID inside a notification identifier this mapping made.
    public static func uid(forNotificationIdentifier identifier: String) -> UInt32? {
        guard identifier.hasPrefix(identifierPrefix) else { return nil }
        return UInt32(identifier.dropFirst(identifierPrefix.count))
    }

    public static func wireNotification(_ notification: ANCSNotification, receivedAt: Date, timeZone: TimeZone) -> WireNotification {
        var wire = WireNotification()
        wire.id = WireNotificationID(source: notification.appIdentifier, notification: notificationIdentifier(uid: notification.uid))
        wire.sourceName = notification.appName ?? notification.appIdentifier
        if !notification.title.isEmpty { wire.title = notification.title }
        if !notification.subtitle.isEmpty { wire.subtitle = notification.subtitle }
        if !notification.message.isEmpty { wire.body = .with { $0.runs = [.with { $0.text = notification.message }] } }
        let delivered = notification.date.flatMap { date(fromANCS: $0, timeZone: timeZone) } ?? receivedAt
        wire.deliveryDateMs = Int64((delivered.timeIntervalSince1970 * 1000).rounded())
        if notification.flags.contains(.important) {
            wire.attributes |= UInt32(Notifbridge_V1_Attribute.timeSensitive.rawValue)
        }
        if notification.flags.contains(.positiveAction) {
            wire.actions.append(action(positiveActionIdentifier, notification.positiveActionLabel, .background))
        }
        if notification.flags.contains(.negativeAction) {
            wire.actions.append(action(negativeActionIdentifier, notification.negativeActionLabel, .dismiss))
        }
        wire.category = Notifbridge_V1_Category(rawValue: Int(notification.category.rawValue) + 1) ?? .other
        return wire
    }

    /// Silent notifications and ones from before the accessory connected do not alert; only
    /// these flags and the category say anything about alerting in ANCS.
    public static func alerting(_ notification: ANCSNotification) -> WireAlertingContext {
        let silent = notification.flags.contains(.silent)
        let preExisting = notification.flags.contains(.preExisting)
        return .with {
            $0.shouldAlert = !silent && !preExisting
            $0.notificationCanAlert = !preExisting
            $0.kind = notification.category == .incomingCall ? .incomingCall : .notification
            if !silent { $0.sound = .init() }
        }
    }

    /// Parses the ANCS date, `yyyyMMdd'T'HHmmSS` in the phone's local time, in `timeZone`; nil
    /// when it does not have that shape or names no real time.
    public static func date(fromANCS text: String, timeZone: TimeZone) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 15, bytes[8] == UInt8(ascii: "T") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day
        else { return nil }
        return date
    }

    private static func action(_ identifier: String, _ label: String?, _ type: Notifbridge_V1_Action.TypeEnum) -> Notifbridge_V1_Action {
        .with {
            $0.identifier = identifier
            if let label { $0.title = label }
            $0.type = type
        }
    }
}
