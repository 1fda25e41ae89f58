import Foundation
import Logging
import Synchronization
import NIOCore
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeWire

extension AccessoryDaemon {
    func serveControl(_ channel: ControlChannel) async {
        do {
            try await channel.executeThenClose { inbound, outbound in
                for try await line in inbound {
                    switch line {
                    case .failure(let error):
                        try await outbound.write(Self.encode(.failure(error.description)))
                        return
                    case .success(let text):
                        try await outbound.write(Self.encode(await handleControl(text)))
                    }
                }
            }
        } catch {
            logger.notice("control client failed: \(error)")
        }
    }

    private func handleControl(_ text: String) async -> ControlReply {
        do {
            return await respond(try ControlRequest(line: text))
        } catch {
            return .failure(error.description)
        }
    }

    private static func encode(_ reply: ControlReply) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(reply)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"ok":false}"#
    }

    /// Carries out a control request: lists notifications, or sends a response, dismissal or
    /// removal to the connected iPhone as a sealed accessory → host event.
    public func respond(_ request: ControlRequest) async -> ControlReply {
        if request.op == .list {
            do {
                return ControlReply(ok: true, notifications: try store.notifications().map(Self.listed))
            } catch {
                return .failure("cannot read the store: \(error)")
            }
        }
        guard let source = request.source, let id = request.id, !source.isEmpty, !id.isEmpty else {
            return .failure("\(request.op.rawValue) needs the notification's source and id")
        }
        let record: StoredNotification
        do {
            guard let found = try store.notification(source: source, id: id), !found.removed else {
                return .failure("no notification \(source)/\(id) on this accessory (see `respond list`)")
            }
            record = found
        } catch {
            return .failure("cannot read the store: \(error)")
        }
        let event: AccessoryEvent.OneOf_Event
        switch Self.event(for: request, record: record) {
        case .success(let built): event = built
        case .failure(let reason): return .failure(reason.description)
        }
        switch await sendToHost(event) {
        case .failure(let reason):
            return .failure(reason.description)
        case .success:
            if request.op == .dismiss || request.op == .clear {
                if (try? store.removeLocally(source: source, id: id, now: Date())) == true {
                    presenter.present(.notification(record, change: .removed))
                }
            }
            logger.info("sent \(request.op.rawValue) for \(source)/\(id) to the iPhone")
            return .success("sent \(request.op.rawValue) for \(source)/\(id) to the iPhone")
        }
    }

    /// What the iPhone receives for a request, checked against the notification's actions.
    private static func event(for request: ControlRequest, record: StoredNotification) -> Result<AccessoryEvent.OneOf_Event, SendFailure> {
        let actions = record.notification.actions
        let available = actions.map { "\($0.identifier) (\(typeName($0.type)))" }.joined(separator: ", ")
        func response(_ actionID: String, text: String? = nil) -> AccessoryEvent.OneOf_Event {
            .response(.with {
                $0.id = record.notification.id
                $0.actionIdentifier = actionID
                if let text { $0.userText = text }
            })
        }
        switch request.op {
        case .list:
            return .failure("list sends nothing")
        case .action, .reply:
            guard let actionID = request.action, let action = actions.first(where: { $0.identifier == actionID }) else {
                return .failure(SendFailure("\(record.sourceIdentifier)/\(record.notificationIdentifier) has no action \"\(request.action ?? "")\"; it has: \(available.isEmpty ? "none" : available)"))
            }
            if request.op == .action {
                guard action.type != .textInput else { return .failure(SendFailure("action \(actionID) takes text: use reply")) }
                return .success(response(actionID))
            }
            guard action.type == .textInput else { return .failure(SendFailure("action \(actionID) does not take text: use action")) }
            guard let text = request.text, !text.isEmpty else { return .failure("a reply needs text") }
            guard text.utf8.count <= ContentLimits.maxTextFieldLength else {
                return .failure(SendFailure("a reply is at most \(ContentLimits.maxTextFieldLength) bytes; this one is \(text.utf8.count)"))
            }
            return .success(response(actionID, text: text))
        case .dismiss:
            guard let dismiss = actions.first(where: { $0.type == .dismiss }) else {
                return .failure("this notification has no dismiss action; use clear to remove it on the phone")
            }
            return .success(response(dismiss.identifier))
        case .clear:
            return .success(.removeOnPhone(.with { $0.ids = [record.notification.id] }))
        }
    }

    /// Hands the event to the newest established iPhone connection and waits until it is sent.
    private func sendToHost(_ event: AccessoryEvent.OneOf_Event) async -> Result<Void, SendFailure> {
        let target = state.withLock { state in
            state.connections.values.filter(\.established).max { $0.connectedAt < $1.connectedAt }?.inputs
        }
        guard let target else { return .failure("no iPhone is connected; nothing was sent") }
        return await withCheckedContinuation { continuation in
            target.push(.send(event, reply: SendReply(continuation)))
        }
    }

    private static func typeName(_ type: Notifbridge_V1_Action.TypeEnum) -> String {
        switch type {
        case .dismiss: "dismiss"
        case .background: "background"
        case .textInput: "text input"
        case .unspecified, .UNRECOGNIZED: "unknown"
        }
    }

    private static func listed(_ record: StoredNotification) -> ListedNotification {
        let n = record.notification
        return ListedNotification(
            source: record.sourceIdentifier,
            id: record.notificationIdentifier,
            app: n.sourceName,
            title: n.hasTitle ? n.title : nil,
            body: n.hasBody ? n.body.plainText : nil,
            actions: n.actions.map { .init(id: $0.identifier, title: $0.hasTitle ? $0.title : nil, type: typeName($0.type)) },
            alerted: record.alerted,
            receivedAt: record.receivedAt
        )
    }
}
