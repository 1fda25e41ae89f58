import Foundation
import Logging
import NotifBridgeControl
import Synchronization
import NIOCore
import NotifBridgeANCS
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeWire

/// The local control socket's requests (`notifbridge respond`): list what is stored, and send
/// responses, dismissals and removals to the connected iPhone through its connection's loop.
public struct ControlService: Sendable {
    let store: AccessoryStore
    let registry: ConnectionRegistry
    let presenter: any Presenter
    let logger: Logger
    /// Notifications that came through ANCS are acted on through its Control Point.
    let ancs: ANCSRunner
    /// With no iPhone connected, replies go over the internet, if a relay is configured.
    let internet: InternetOutbox

    /// Notifications read from the store at a time while listing: memory stays bounded however
    /// many are stored.
    static let listPageSize = 100

    func serve(_ channel: ControlChannel) async {
        do {
            try await channel.executeThenClose { inbound, outbound in
                for try await line in inbound {
                    switch line {
                    case .failure(let error):
                        try await outbound.write(Self.encode(.failure(error.description)))
                        return
                    case .success(let text):
                        switch Self.decodeRequest(text) {
                        case .refused(let reply):
                            try await outbound.write(Self.encode(reply))
                        case .request(let request) where request.op == .list:
                            let end = try await list(request) { try await outbound.write(Self.encode(ControlReply(ok: true, notification: $0))) }
                            try await outbound.write(Self.encode(end))
                        case .request(let request):
                            try await outbound.write(Self.encode(await respond(request)))
                        }
                    }
                }
            }
        } catch is CancellationError {
            // The daemon is stopping with a client connected: nothing failed.
        } catch {
            logger.notice("control client failed: \(error)")
        }
    }

    private enum DecodedLine {
        case request(ControlRequest)
        case refused(ControlReply)
    }

    private static func decodeRequest(_ text: String) -> DecodedLine {
        do {
            return .request(try ControlRequest(line: text))
        } catch {
            return .refused(.failure(error.description))
        }
    }

    /// One reply line, at most `maxControlReplyLineLength` bytes: a notification whose line
    /// would be longer is listed without its body.
    static func encode(_ reply: ControlReply) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(reply) else { return #"{"ok":false,"message":"the reply could not be encoded"}"# }
        if data.count > maxControlReplyLineLength, var notification = reply.notification, notification.body != nil {
            notification.body = nil
            notification.bodyOmitted = true
            return encode(ControlReply(ok: reply.ok, notification: notification))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Lists notifications newest first, handing each to `each` as it is read from the store,
    /// a page at a time, and returns the line that ends the list: its count, or why it stopped.
    /// Errors thrown by `each` (the client went away) end the listing and are rethrown.
    public func list(_ request: ControlRequest, each: (ListedNotification) async throws -> Void) async throws -> ControlReply {
        if let limit = request.limit, limit < 1 {
            return .failure("limit must be at least 1; it was \(limit)")
        }
        let wanted = request.limit ?? .max
        var cursor: NotificationCursor?
        var count = 0
        while count < wanted {
            let page: NotificationPage
            do {
                page = try store.notificationPage(after: cursor, limit: min(Self.listPageSize, wanted - count), includeRemoved: request.includeRemoved ?? false)
            } catch {
                return .failure("cannot read the store: \(error)")
            }
            if !page.damaged.isEmpty {
                logger.warning("listing skipped \(page.damaged.count) stored notification(s) that can no longer be read (the store is damaged there)")
                for damaged in page.damaged {
                    logger.debug("damaged record", metadata: ["source": "\(damaged.source)", "id": "\(damaged.id)", "reason": "\(damaged.reason)"])
                }
            }
            for record in page.records {
                try await each(Self.listed(record))
                count += 1
            }
            guard let next = page.next else { break }
            cursor = next
        }
        return ControlReply(ok: true, count: count)
    }

    /// Carries out a control request that sends something: a response, dismissal or removal to
    /// the connected iPhone as a sealed accessory → host event. `list` streams: see ``list(_:each:)``.
    public func respond(_ request: ControlRequest) async -> ControlReply {
        if request.op == .list {
            return .failure("list replies with one line per notification; call list(_:each:)")
        }
        guard let source = request.source, let id = request.id, !source.isEmpty, !id.isEmpty else {
            return .failure("\(request.op.rawValue) needs the notification's source and id")
        }
        let record: StoredNotification
        do {
            guard let found = try store.notification(source: source, id: id) else {
                return .failure("no notification \(source)/\(id) on this accessory (see `respond list`)")
            }
            // `respond list --all` still shows it, marked (removed): say why it cannot be acted on.
            guard !found.removed else {
                return .failure("notification \(source)/\(id) was removed (dismissed, cleared or withdrawn by the iPhone); there is nothing left to act on")
            }
            record = found
        } catch {
            return .failure("cannot read the store: \(error)")
        }
        let sent: Result<Void, SendFailure>
        if ANCSMapping.uid(forNotificationIdentifier: id) != nil {
            switch Self.ancsAction(for: request, record: record) {
            case .success(let action): sent = await ancs.perform(action, identifier: id).mapError { SendFailure($0.description) }
            case .failure(let reason): return .failure(reason.description)
            }
        } else {
            switch Self.event(for: request, record: record) {
            case .success(let event): sent = await sendToHost(event)
            case .failure(let reason): return .failure(reason.description)
            }
        }
        switch sent {
        case .failure(let reason):
            return .failure(reason.description)
        case .success:
            if request.op == .dismiss || request.op == .clear {
                // Presented as stored now (removed), not as it was read before the request.
                if (try? store.removeLocally(source: source, id: id, now: Date())) == true, let removed = try? store.notification(source: source, id: id) {
                    presenter.present(.notification(removed, change: .removed))
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
                return .failure(missingAction(request, record, available: available.isEmpty ? "none" : available))
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

    /// The refusal of a request that names no action, or one the notification does not have.
    private static func missingAction(_ request: ControlRequest, _ record: StoredNotification, available: String) -> SendFailure {
        let notification = "\(record.sourceIdentifier)/\(record.notificationIdentifier)"
        guard let action = request.action else {
            return SendFailure("\(request.op.rawValue) needs the action to take (\"action\"); \(notification) has: \(available)")
        }
        return SendFailure("\(notification) has no action \"\(action)\"; it has: \(available)")
    }

    /// The ANCS action a request performs: an action by its identifier, or the negative action
    /// for dismiss and clear (ANCS has no other way to remove a notification on the iPhone).
    private static func ancsAction(for request: ControlRequest, record: StoredNotification) -> Result<ANCSActionID, SendFailure> {
        let identifiers = record.notification.actions.map(\.identifier)
        let available = identifiers.isEmpty ? "none" : identifiers.joined(separator: ", ")
        switch request.op {
        case .list:
            return .failure("list sends nothing")
        case .reply:
            return .failure(SendFailure("\(record.notificationIdentifier) came through ANCS, which carries no text replies"))
        case .action:
            guard let actionID = request.action, identifiers.contains(actionID), let action = ANCSMapping.actionID(forIdentifier: actionID) else {
                return .failure(missingAction(request, record, available: available))
            }
            return .success(action)
        case .dismiss, .clear:
            guard let negative = record.notification.actions.first(where: { ANCSMapping.actionID(forIdentifier: $0.identifier) == .negative }) else {
                return .failure("this notification came through ANCS and has no negative action, the only way ANCS removes one on the iPhone")
            }
            return .success(ANCSMapping.actionID(forIdentifier: negative.identifier) ?? .negative)
        }
    }

    /// Hands the event to the newest established iPhone connection and waits until it is sent;
    /// with none, pushes it over the internet.
    private func sendToHost(_ event: AccessoryEvent.OneOf_Event) async -> Result<Void, SendFailure> {
        guard let target = registry.newestEstablished() else { return await internet.send(event) }
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
            category: n.category == .unspecified ? nil : String(describing: n.category),
            alerted: record.alerted,
            removed: record.removed,
            receivedAt: record.receivedAt
        )
    }
}
