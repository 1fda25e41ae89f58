import Foundation

/// What a local program asks the running accessory over its control socket
/// (`<state>/control.sock`, mode 0600): one JSON object per line, one reply per line.
public struct ControlRequest: Codable, Sendable, Hashable {
    public enum Operation: String, Codable, Sendable, CaseIterable {
        /// The notifications on the accessory, newest first.
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

    public init(op: Operation, source: String? = nil, id: String? = nil, action: String? = nil, text: String? = nil) {
        self.op = op
        self.source = source
        self.id = id
        self.action = action
        self.text = text
    }
}

public struct ControlReply: Codable, Sendable, Hashable {
    public var ok: Bool
    public var message: String?
    public var notifications: [ListedNotification]?

    public static func success(_ message: String) -> ControlReply { ControlReply(ok: true, message: message) }
    public static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, message: message) }
}

/// A notification as `respond list` shows it: enough to pick one and act on it.
public struct ListedNotification: Codable, Sendable, Hashable {
    public struct Action: Codable, Sendable, Hashable {
        public var id: String
        public var title: String?
        public var type: String
    }

    public var source: String
    public var id: String
    public var app: String
    public var title: String?
    public var body: String?
    public var actions: [Action]
    public var alerted: Bool
    public var receivedAt: Date
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

/// Control lines longer than this are refused before they are buffered.
public let maxControlLineLength = 64 * 1024
