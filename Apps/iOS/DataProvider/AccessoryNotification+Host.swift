import AccessoryNotifications
import Foundation
import struct NotifBridgeHostCore.HostAlerting
import struct NotifBridgeHostCore.HostNotification

/// The platform's notification as the package's `HostNotification`, field for field
/// (reference/apple-api.md §3–4); the package serialises it for the wire.
extension AccessoryNotification {
    /// Files bigger than this are left out: they would not fit the accessory's largest message
    /// (256 KiB by default, PROTOCOL.md §7) beside the rest of the notification.
    static let maxFileLength = 128 * 1024

    func hostNotification() async -> HostNotification {
        var host = HostNotification(
            source: identifier.sourceIdentifier,
            id: identifier.notificationIdentifier,
            sourceName: sourceName,
            title: title,
            subtitle: subtitle,
            body: body?.string,
            thread: threadIdentifier
        )
        host.summary = summary?.string
        host.deliveryDate = deliveryDate
        switch displayDate {
        case .deliveryDate: host.displayDate = .init(kind: .delivery, date: nil)
        case .contentDate(let date): host.displayDate = .init(kind: .content, date: date)
        case .allDayDate(let date): host.displayDate = .init(kind: .allDay, date: date)
        case .hideDate: host.displayDate = .init(kind: .hide, date: nil)
        @unknown default: host.displayDate = nil
        }
        var attributes: [HostNotification.AttributeInput] = []
        if self.attributes.contains(.timeSensitive) { attributes.append(.timeSensitive) }
        if self.attributes.contains(.critical) { attributes.append(.critical) }
        if self.attributes.contains(.priority) { attributes.append(.priority) }
        host.attributes = attributes
        host.actions = actions.map { action in
            switch action.type {
            case .dismiss: .init(id: action.identifier, title: action.title, type: .dismiss)
            case .background: .init(id: action.identifier, title: action.title, type: .background)
            case .textInput(let placeholder): .init(id: action.identifier, title: action.title, type: .textInput, placeholder: placeholder)
            @unknown default: .init(id: action.identifier, title: action.title, type: .background)
            }
        }
        host.sourceIcon = await Self.read(sourceIcon)
        host.contextIcon = await Self.read(contextIcon)
        var files: [HostNotification.FileInput] = []
        for attachment in attachments {
            if let file = await Self.read(attachment) { files.append(file) }
        }
        host.attachments = files
        return host
    }

    /// A file's bytes, read now: its URL is ephemeral (apple-api §3).
    private static func read(_ file: File?) async -> HostNotification.FileInput? {
        guard let file, let url = try? await file.url,
              let data = try? Data(contentsOf: url, options: .mappedIfSafe), data.count <= maxFileLength else { return nil }
        return HostNotification.FileInput(type: file.type.identifier, base64: data.base64EncodedString())
    }
}

extension AlertingContext {
    var hostAlerting: HostAlerting {
        let kind: HostAlerting.Kind = switch self.kind {
        case .incomingCall: .incomingCall
        case .timer: .timer
        default: .notification
        }
        return HostAlerting(
            shouldAlert: shouldAlert,
            canAlert: notificationCanAlert,
            suppressedByFocus: isSuppressedByFocus,
            kind: kind,
            sound: sound.map { HostAlerting.Sound(ignoreSilentMode: $0.shouldIgnoreSilentMode) }
        )
    }
}
