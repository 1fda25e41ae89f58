import Foundation

/// What a local program asks the running accessory over its control socket
/// (`<state>/control.sock`, mode 0600): one JSON object per line. Every operation but `list`
/// gets one reply line; `list` gets one line per notification (`ControlReply.notification`),
/// written as the daemon reads them from the store, then a last line with `count`.
public struct ControlRequest: Codable, Sendable, Hashable {
    public enum Operation: String, Codable, Sendable, CaseIterable {
        /// The notifications on the accessory, newest first; `limit` and `includeRemoved` apply.
        case list
        /// Invoke a notification's action (background or dismiss type).
        case action
        /// Reply to a text-input action.
        case reply
        /// Dismiss: the notification's dismiss action, and gone from the accessory.
        case dismiss
        /// Clear it on the phone too (session.removeNotifications) and here.
        case clear
    }

    public var op: Operation
    public var source: String?
    public var id: String?
    public var action: String?
    public var text: String?
    /// `list`: at most this many (at least 1); all when nil.
    public var limit: Int?
    /// `list`: removed notifications too, marked `removed`.
    public var includeRemoved: Bool?

    public init(
        op: Operation, source: String? = nil, id: String? = nil, action: String? = nil, text: String? = nil,
        limit: Int? = nil, includeRemoved: Bool? = nil
    ) {
        self.op = op
        self.source = source
        self.id = id
        self.action = action
        self.text = text
        self.limit = limit
        self.includeRemoved = includeRemoved
    }
}

/// One reply line. A line with `notification` is one item of a `list`; any other line ends the
/// reply: `ok` and a `message`, or for `list`, `count`, how many were sent.
public struct ControlReply: Codable, Sendable, Hashable {
    public var ok: Bool
    public var message: String?
    public var notification: ListedNotification?
    public var count: Int?

    public init(ok: Bool, message: String? = nil, notification: ListedNotification? = nil, count: Int? = nil) {
        self.ok = ok
        self.message = message
        self.notification = notification
        self.count = count
    }

    public static func success(_ message: String) -> ControlReply { ControlReply(ok: true, message: message) }
    public static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, message: message) }
}

/// A notification as `respond list` shows it: enough to pick one and act on it.
public struct ListedNotification: Codable, Sendable, Hashable {
    public struct Action: Codable, Sendable, Hashable {
        public var id: String
        public var title: String?
        public var type: String

        public init(id: String, title: String?, type: String) {
            self.id = id
            self.title = title
            self.type = type
        }
    }

    public var source: String
    public var id: String
    public var app: String
    public var title: String?
    public var body: String?
    public var actions: [Action]
    /// The ANCS category, for notifications that came through ANCS.
    public var category: String?
    public var alerted: Bool
    /// Removed (on the phone, or dismissed or cleared here); listed only when asked for.
    public var removed: Bool
    public var receivedAt: Date
    /// The body was left out because the line would have been longer than
    /// `maxControlReplyLineLength` (only possible with a raised `WireLimits.maxMessageLength`).
    public var bodyOmitted: Bool?

    public init(
        source: String, id: String, app: String, title: String?, body: String?, actions: [Action],
        category: String? = nil, alerted: Bool, removed: Bool = false, receivedAt: Date, bodyOmitted: Bool? = nil
    ) {
        self.source = source
        self.id = id
        self.app = app
        self.title = title
        self.body = body
        self.actions = actions
        self.category = category
        self.alerted = alerted
        self.removed = removed
        self.receivedAt = receivedAt
        self.bodyOmitted = bodyOmitted
    }
}

extension ControlRequest {
    /// Why a control line is not a request; the daemon sends `description` back as its reply.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses one control line (without its newline): a JSON object with "op" and the fields
    /// that operation needs. Whether the notification and action exist is the daemon's check.
    public init(line: String) throws(Invalid) {
        do {
            self = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
        } catch {
            let operations = Operation.allCases.map(\.rawValue).joined(separator: ", ")
            throw Invalid(description: "not a control request (a JSON object with \"op\": one of \(operations)): \(error)")
        }
    }
}

/// Request lines longer than this are refused before they are buffered.
public let maxControlLineLength = 64 * 1024

/// Reply lines longer than this are refused by the client before they are buffered. One line
/// carries one notification: with the default limits its text is at most a few hundred KiB,
/// and JSON escaping at most multiplies it by six. The daemon never writes a longer line.
public let maxControlReplyLineLength = 8 * 1024 * 1024
