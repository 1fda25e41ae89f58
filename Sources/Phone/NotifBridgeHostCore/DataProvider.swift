import Foundation
import NotifBridgeWire

/// The data-provider extension's portable logic: serialises what iOS hands it into wire events.
/// Pure: the delivery date comes in with the call, not from a clock.
public enum DataProvider {
    public struct InvalidInput: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public static func event(for operation: HostOperation, now: Date) throws(InvalidInput) -> HostEvent.OneOf_Event {
        switch operation {
        case .add(let notification, let alerting):
            var add = Notifbridge_V1_AddNotification()
            add.notification = try serialize(notification, now: now)
            add.alerting = serialize(alerting)
            return .add(add)
        case .update(let notification):
            var update = Notifbridge_V1_UpdateNotification()
            update.notification = try serialize(notification, now: now)
            return .update(update)
        case .remove(let source, let id):
            var remove = Notifbridge_V1_RemoveNotification()
            remove.id = WireNotificationID(source: source, notification: id)
            return .remove(remove)
        case .removeAll:
            return .removeAll(Notifbridge_V1_RemoveAllNotifications())
        }
    }

    public static func serialize(_ input: HostNotification, now: Date) throws(InvalidInput) -> WireNotification {
        var wire = WireNotification()
        wire.id = WireNotificationID(source: input.source, notification: input.id)
        wire.sourceName = input.sourceName
        if let title = input.title { wire.title = title }
        if let subtitle = input.subtitle { wire.subtitle = subtitle }
        if let runs = input.bodyRuns {
            wire.body = try richText(runs)
        } else if let body = input.body {
            wire.body = .with { $0.runs = [.with { $0.text = body }] }
        }
        if let summary = input.summary { wire.summary = .with { $0.runs = [.with { $0.text = summary }] } }
        if let thread = input.thread { wire.threadIdentifier = thread }
        wire.deliveryDateMs = milliseconds(input.deliveryDate ?? now)
        if let display = input.displayDate {
            wire.displayDate = .with {
                switch display.kind {
                case .delivery: $0.kind = .deliveryDate
                case .content: $0.kind = .contentDate
                case .allDay: $0.kind = .allDayDate
                case .hide: $0.kind = .hideDate
                }
                if let date = display.date { $0.dateMs = milliseconds(date) }
            }
        }
        for attribute in input.attributes ?? [] {
            switch attribute {
            case .timeSensitive: wire.attributes |= UInt32(Notifbridge_V1_Attribute.timeSensitive.rawValue)
            case .critical: wire.attributes |= UInt32(Notifbridge_V1_Attribute.critical.rawValue)
            case .priority: wire.attributes |= UInt32(Notifbridge_V1_Attribute.priority.rawValue)
            }
        }
        wire.actions = (input.actions ?? []).map { action in
            .with {
                $0.identifier = action.id
                if let title = action.title { $0.title = title }
                switch action.type {
                case .dismiss: $0.type = .dismiss
                case .background: $0.type = .background
                case .textInput:
                    $0.type = .textInput
                    $0.placeholder = action.placeholder ?? ""
                }
            }
        }
        if let icon = input.sourceIcon { wire.sourceIcon = try file(icon) }
        if let icon = input.contextIcon { wire.contextIcon = try file(icon) }
        wire.attachments = try (input.attachments ?? []).map { (file: HostNotification.FileInput) throws(InvalidInput) in try self.file(file) }
        return wire
    }

    public static func serialize(_ alerting: HostAlerting) -> WireAlertingContext {
        .with {
            $0.shouldAlert = alerting.shouldAlert
            $0.notificationCanAlert = alerting.canAlert
            $0.suppressedByFocus = alerting.suppressedByFocus
            switch alerting.kind {
            case .notification: $0.kind = .notification
            case .incomingCall: $0.kind = .incomingCall
            case .timer: $0.kind = .timer
            case .activeCall: $0.kind = .activeCall
            }
            if let sound = alerting.sound { $0.sound = .with { $0.ignoreSilentMode = sound.ignoreSilentMode } }
        }
    }

    private static func richText(_ runs: [HostNotification.TextRunInput]) throws(InvalidInput) -> Notifbridge_V1_RichText {
        var text = Notifbridge_V1_RichText()
        for run in runs {
            if let glyph = run.glyph {
                var wireGlyph = Notifbridge_V1_ImageGlyph()
                wireGlyph.contentIdentifier = glyph.id
                wireGlyph.contentDescription = glyph.description
                if let image = glyph.image { wireGlyph.image = try file(image) }
                text.runs.append(.with { $0.glyph = wireGlyph })
            } else if let string = run.text {
                text.runs.append(.with { $0.text = string })
            } else {
                throw InvalidInput(description: "a body run needs text or glyph")
            }
        }
        return text
    }

    private static func file(_ input: HostNotification.FileInput) throws(InvalidInput) -> Notifbridge_V1_File {
        guard let data = Data(base64Encoded: input.base64) else {
            throw InvalidInput(description: "file of type \(input.type) is not valid base64")
        }
        return .with {
            $0.uniformType = input.type
            $0.data = data
        }
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
