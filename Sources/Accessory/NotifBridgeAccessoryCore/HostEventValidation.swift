import NotifBridgeWire

extension HostEvent {
    /// The notification this event is about; nil for remove-all.
    public var notificationID: WireNotificationID? {
        switch event {
        case .add(let add): add.hasNotification ? add.notification.id : nil
        case .update(let update): update.hasNotification ? update.notification.id : nil
        case .remove(let remove): remove.hasID ? remove.id : nil
        case .removeAll, nil: nil
        }
    }
}

/// Field limits inside a decrypted event (docs/PROTOCOL.md §7), matching notifbridge.options so
/// nanopb firmware with static buffers never sees more than it can hold.
public enum ContentLimits {
    public static let maxIdentifierLength = 255
    public static let maxTextFieldLength = 1024
    public static let maxActions = 16
    public static let maxUniformTypeLength = 128
    public static let maxGlyphIdentifierLength = 128
    /// Attachments per notification, and bytes per attachment.
    public static let maxAttachments = 8
    public static let maxAttachmentBytes = 128 * 1024
    /// Bytes per icon (source, context, or an inline glyph image).
    public static let maxIconBytes = 32 * 1024
    /// The largest `HostEvent.sequence`: 2^63 − 1. The store keeps sequences in SQLite's signed
    /// 64-bit integers, and a host counting from 1 never gets near it.
    public static let maxSequence = UInt64(Int64.max)
}

extension AccessorySession {
    /// Checks a decrypted event against `ContentLimits` exactly as the session does before it
    /// delivers one, so hosts, tools and fuzzers can ask what the accessory would refuse.
    public static func validate(_ event: HostEvent) throws(WireError) {
        guard event.sequence > 0 else {
            throw WireError(.malformedMessage, "HostEvent.sequence must start at 1")
        }
        guard event.sequence <= ContentLimits.maxSequence else {
            throw WireError(.tooLarge, "HostEvent.sequence is above \(ContentLimits.maxSequence)")
        }
        switch event.event {
        case nil:
            throw WireError(.malformedMessage, "HostEvent carries no event")
        case .add(let add):
            guard add.hasNotification else { throw WireError(.malformedMessage, "add carries no notification") }
            try validate(add.notification)
        case .update(let update):
            guard update.hasNotification else { throw WireError(.malformedMessage, "update carries no notification") }
            try validate(update.notification)
        case .remove(let remove):
            try validate(remove.id)
        case .removeAll:
            break
        }
    }

    private static func validate(_ notification: WireNotification) throws(WireError) {
        try validate(notification.id)
        try checkLength("source_name", notification.sourceName, ContentLimits.maxIdentifierLength)
        try checkLength("title", notification.title, ContentLimits.maxTextFieldLength)
        try checkLength("subtitle", notification.subtitle, ContentLimits.maxTextFieldLength)
        try checkLength("thread_identifier", notification.threadIdentifier, ContentLimits.maxIdentifierLength)
        guard notification.actions.count <= ContentLimits.maxActions else {
            throw WireError(.tooLarge, "\(notification.actions.count) actions; at most \(ContentLimits.maxActions)")
        }
        for action in notification.actions {
            try checkLength("action identifier", action.identifier, ContentLimits.maxIdentifierLength)
            try checkLength("action title", action.title, ContentLimits.maxIdentifierLength)
            try checkLength("action placeholder", action.placeholder, ContentLimits.maxIdentifierLength)
            guard !action.identifier.isEmpty else { throw WireError(.malformedMessage, "action with an empty identifier") }
        }
        for text in [notification.body, notification.summary] {
            for case .glyph(let glyph) in text.runs.compactMap(\.run) {
                try checkLength("glyph content_identifier", glyph.contentIdentifier, ContentLimits.maxGlyphIdentifierLength)
                try checkLength("glyph content_description", glyph.contentDescription, ContentLimits.maxIdentifierLength)
                try checkLength("glyph image type", glyph.image.uniformType, ContentLimits.maxUniformTypeLength)
            }
        }
        for file in [notification.sourceIcon, notification.contextIcon] + notification.attachments {
            try checkLength("file uniform_type", file.uniformType, ContentLimits.maxUniformTypeLength)
        }
        guard notification.attachments.count <= ContentLimits.maxAttachments else {
            throw WireError(.tooLarge, "\(notification.attachments.count) attachments; at most \(ContentLimits.maxAttachments)")
        }
        for (index, file) in notification.attachments.enumerated() where file.data.count > ContentLimits.maxAttachmentBytes {
            throw WireError(.tooLarge, "attachment \(index + 1) is \(file.data.count) bytes; at most \(ContentLimits.maxAttachmentBytes)")
        }
        let glyphImages = (notification.body.runs + notification.summary.runs).compactMap { run -> Notifbridge_V1_File? in
            if case .glyph(let glyph) = run.run { return glyph.image }
            return nil
        }
        for (name, icon) in [("source icon", notification.sourceIcon), ("context icon", notification.contextIcon)] + glyphImages.map({ ("glyph image", $0) })
        where icon.data.count > ContentLimits.maxIconBytes {
            throw WireError(.tooLarge, "\(name) is \(icon.data.count) bytes; at most \(ContentLimits.maxIconBytes)")
        }
    }

    private static func validate(_ id: WireNotificationID) throws(WireError) {
        guard !id.sourceIdentifier.isEmpty, !id.notificationIdentifier.isEmpty else {
            throw WireError(.malformedMessage, "notification id needs both source_identifier and notification_identifier")
        }
        // C strings end at U+0000, and so do the store's keys (SQLite text bound by GRDB) and
        // nanopb's: "a\0b" and "a\0c" would be one notification.
        guard !id.sourceIdentifier.utf8.contains(0), !id.notificationIdentifier.utf8.contains(0) else {
            throw WireError(.malformedMessage, "notification id contains U+0000")
        }
        try checkLength("source_identifier", id.sourceIdentifier, ContentLimits.maxIdentifierLength)
        try checkLength("notification_identifier", id.notificationIdentifier, ContentLimits.maxIdentifierLength)
    }

    private static func checkLength(_ field: String, _ value: String, _ limit: Int) throws(WireError) {
        guard value.utf8.count <= limit else {
            throw WireError(.tooLarge, "\(field) is \(value.utf8.count) bytes; at most \(limit)")
        }
    }
}
