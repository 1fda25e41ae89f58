import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeDisplay

/// Acts on a notification from the accessory side, through the running daemon's control socket.
struct RespondCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "respond",
        abstract: "Reply to, act on, dismiss or clear a notification from the accessory.",
        discussion: "Talks to the running `notifbridge accessory` through <state>/control.sock; the iPhone gets the response sealed, as the platform's NotificationResponse or removal request.",
        subcommands: [List.self, Action.self, Reply.self, Dismiss.self, Clear.self]
    )

    struct Target: ParsableArguments {
        @Option(help: "The accessory's state directory.") var state: String = defaultStateDirectory()

        func validate() throws { try checkStateOption(state) }
    }

    struct Notification: ParsableArguments {
        @Argument(help: "Source app bundle identifier, e.g. com.apple.MobileSMS.") var source: String
        @Argument(help: "Notification identifier.") var id: String

        /// No stored notification has a longer one (docs/PROTOCOL.md §7); said here by name,
        /// before the request is refused as one overlong line.
        func validate() throws {
            for (name, value) in [("source", source), ("notification identifier", id)] where value.utf8.count > ContentLimits.maxIdentifierLength {
                throw ValidationError("the \(name) is \(value.utf8.count) bytes; a stored one is at most \(ContentLimits.maxIdentifierLength)")
            }
        }
    }

    static func send(_ request: ControlRequest, state: String) async throws {
        let reply = try await ControlClient.send(request, socketPath: AccessoryConfiguration.controlSocketPath(stateDirectory: state))
        guard reply.ok else { throw CommandFailure(terminalSafe(reply.message ?? "the accessory refused the request")) }
        if let message = reply.message { print(terminalSafe(message)) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the notifications on the accessory with their actions, newest first.",
            discussion: "Lines are printed as the accessory reads them from its store, however many there are."
        )
        @OptionGroup var target: Target
        @Option(parsing: .unconditional, help: "At most this many notifications (at least 1).") var limit: Int?
        @Flag(help: "Removed notifications too, marked (removed).") var all = false
        @Flag(help: "One JSON object per notification and line, for scripts.") var json = false

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1; it was \(limit)") }
        }

        func run() async throws {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let request = ControlRequest(op: .list, limit: limit, includeRemoved: all ? true : nil)
            let reply = try await ControlClient.send(request, socketPath: AccessoryConfiguration.controlSocketPath(stateDirectory: target.state)) { listed in
                if json {
                    print(jsonEscapingTerminalControls(String(decoding: try encoder.encode(listed), as: UTF8.self)))
                } else {
                    for line in listed.terminalLines { print(line) }
                }
            }
            guard reply.ok else { throw CommandFailure(terminalSafe(reply.message ?? "the accessory refused the request")) }
            if reply.count == 0, !json { print("no notifications") }
        }
    }

    struct Action: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invoke one of a notification's actions.")
        @OptionGroup var target: Target
        @OptionGroup var notification: Notification
        @Argument(help: "The action identifier (see `respond list`).") var action: String
        func run() async throws {
            try await RespondCommand.send(ControlRequest(op: .action, source: notification.source, id: notification.id, action: action), state: target.state)
        }
    }

    struct Reply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a text reply through a text-input action.")
        @OptionGroup var target: Target
        @OptionGroup var notification: Notification
        @Argument(help: "The text-input action identifier.") var action: String
        @Argument(help: "The reply text (at most \(ContentLimits.maxTextFieldLength) bytes of UTF-8).") var text: String

        /// The accessory says the same, but a long text would first meet the control socket's
        /// line limit and be refused in its words.
        func validate() throws {
            guard text.utf8.count <= ContentLimits.maxTextFieldLength else {
                throw ValidationError("a reply is at most \(ContentLimits.maxTextFieldLength) bytes; this one is \(text.utf8.count)")
            }
        }

        func run() async throws {
            try await RespondCommand.send(ControlRequest(op: .reply, source: notification.source, id: notification.id, action: action, text: text), state: target.state)
        }
    }

    struct Dismiss: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Dismiss a notification (its dismiss action) and remove it here.")
        @OptionGroup var target: Target
        @OptionGroup var notification: Notification
        func run() async throws {
            try await RespondCommand.send(ControlRequest(op: .dismiss, source: notification.source, id: notification.id), state: target.state)
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear a notification on the iPhone too, and remove it here.")
        @OptionGroup var target: Target
        @OptionGroup var notification: Notification
        func run() async throws {
            try await RespondCommand.send(ControlRequest(op: .clear, source: notification.source, id: notification.id), state: target.state)
        }
    }
}
