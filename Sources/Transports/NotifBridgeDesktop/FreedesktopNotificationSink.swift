import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeDBus
import Synchronization

/// Alerts as desktop notifications, through `org.freedesktop.Notifications` on the session bus
/// directly: buttons for the notification's actions, an inline reply where the server offers
/// one, and the person's answer sent to the iPhone. An update replaces the same desktop
/// notification (`replaces_id`) and a removal closes it. What each shows and what each signal
/// means is ``DesktopNotificationPlan``; this class only talks to the bus.
public final class FreedesktopNotificationSink: AlertSink {
    public static let busName = "org.freedesktop.Notifications"
    public static let objectPath = "/org/freedesktop/Notifications"
    /// Desktop notifications followed for updates, removals and answers; past this, the oldest
    /// is forgotten (it stays on the desktop, but no longer follows the iPhone).
    public static let maxTracked = 256
    /// Alerts waiting for the bus; newer ones are dropped past this, so a flood from the iPhone
    /// cannot grow memory while the notification server is slow.
    public static let maxQueued = 256

    public typealias Responder = @Sendable (ControlRequest) async -> ControlReply

    private let connection: DBusConnection
    /// What `GetCapabilities` answered when the sink connected.
    public let capabilities: Set<String>
    private let logger: Logger
    private let tracking = Mutex(Tracking())
    private let responder = Mutex<Responder?>(nil)
    private let queue: AsyncStream<AlertEvent>.Continuation
    private let failures = Mutex(0)
    private let dropped = Mutex(0)

    fileprivate struct Tracking {
        var serverID: [String: UInt32] = [:]
        var plans: [UInt32: DesktopNotificationPlan] = [:]
        /// Server IDs in posting order, for forgetting the oldest.
        var order: [UInt32] = []
    }

    /// Connects to the session bus (or `address`), asks the server what it can do and follows
    /// its signals. Throws when there is no bus or no notification server on it.
    public static func connect(to address: DBusBusAddress = .session, logger: Logger) async throws(DBusError) -> FreedesktopNotificationSink {
        let connection = try await DBusConnection.connect(to: address)
        let reply: [DBusValue]
        do {
            reply = try await connection.call(destination: busName, path: objectPath, interface: busName, member: "GetCapabilities", timeout: .seconds(5))
        } catch {
            connection.close()
            throw error
        }
        guard case .array(_, let values)? = reply.first else {
            connection.close()
            throw .typeMismatch(expected: "as", actual: DBusValue.signature(of: reply))
        }
        let sink = FreedesktopNotificationSink(connection: connection, capabilities: Set(values.compactMap(\.stringValue)), logger: logger)
        do {
            try await connection.subscribe(
                matchRule: "type='signal',sender='\(DBusConnection.busDaemon)',interface='\(DBusConnection.busDaemon)',member='NameOwnerChanged',arg0='\(busName)'"
            ) { [weak sink] signal in
                sink?.ownerChanged(signal)
            }
            // Only the server's own signals arrive here: the connection checks each sender
            // against the name's owner, since any client can address a signal to the sink.
            try await connection.subscribe(matchRule: "type='signal',sender='\(busName)',path='\(objectPath)',interface='\(busName)'") { [weak sink] signal in
                sink?.received(signal)
            }
        } catch {
            sink.close()
            throw error
        }
        return sink
    }

    private init(connection: DBusConnection, capabilities: Set<String>, logger: Logger) {
        self.connection = connection
        self.capabilities = capabilities
        self.logger = logger
        let (stream, queue) = AsyncStream.makeStream(of: AlertEvent.self, bufferingPolicy: .bufferingOldest(Self.maxQueued))
        self.queue = queue
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.perform(event)
            }
        }
    }

    /// Where the person's answers go: the daemon's `ControlService.respond`.
    public func respond(using responder: @escaping Responder) {
        self.responder.withLock { $0 = responder }
    }

    public func close() {
        queue.finish()
        connection.close()
    }

    public func alert(_ event: AlertEvent) {
        guard case .dropped = queue.yield(event) else { return }
        if Self.shouldLog(count: dropped.withLock { $0 += 1; return $0 }) {
            logger.notice("desktop notifications are behind the iPhone; \(dropped.withLock { $0 }) dropped so far")
        }
    }

    /// The first of a run of failures, then every hundredth: a flood from the iPhone or a server
    /// that went away must not turn each notification into a log line.
    static func shouldLog(count: Int) -> Bool {
        count % 100 == 1
    }

    /// How many desktop notifications are followed now (for tests).
    public var trackedCount: Int { tracking.withLock { $0.plans.count } }

    private func perform(_ event: AlertEvent) async {
        switch event {
        case .notification(let record, let decision):
            guard decision.alerts else { return }
            await post(DesktopNotificationPlan(record, decision: decision, capabilities: capabilities))
        case .changed(let record, .updated):
            let bannerID = Banner.identifier(source: record.sourceIdentifier, id: record.notificationIdentifier)
            guard tracking.withLock({ $0.serverID[bannerID] != nil }) else { return }
            await post(DesktopNotificationPlan(record, decision: record.alertDecision, capabilities: capabilities))
        case .changed(let record, _):
            let bannerID = Banner.identifier(source: record.sourceIdentifier, id: record.notificationIdentifier)
            guard let id = tracking.withLock({ $0.forget(bannerID: bannerID) }) else { return }
            await closeNotification(id)
        case .removedAll:
            let ids = tracking.withLock { tracking in
                defer { tracking = Tracking() }
                return tracking.order
            }
            for id in ids { await closeNotification(id) }
        case .burstSummary(let count):
            _ = await notify(arguments(summary: "\(count) more notifications", body: "They arrived in a burst and are listed on the accessory."))
        }
    }

    private func post(_ plan: DesktopNotificationPlan) async {
        let replaces = tracking.withLock { $0.serverID[plan.banner.identifier] ?? 0 }
        let hints = plan.hints.map { key, value -> (DBusValue, DBusValue) in
            switch value {
            case .byte(let byte): (.string(key), .variant(.byte(byte)))
            case .string(let text): (.string(key), .variant(.string(text)))
            }
        }
        guard let id = await notify(arguments(
            replaces: replaces, summary: plan.summary, body: plan.body, actions: plan.actions, hints: hints, expireTimeout: plan.expireTimeout
        )) else { return }
        tracking.withLock { $0.track(id, plan, limit: Self.maxTracked) }
    }

    private func arguments(
        replaces: UInt32 = 0, summary: String, body: String, actions: [String] = [], hints: [(DBusValue, DBusValue)] = [], expireTimeout: Int32 = -1
    ) -> [DBusValue] {
        [
            .string(DesktopNotificationPlan.appName), .uint32(replaces), .string(""), .string(summary), .string(body),
            .array(element: "s", actions.map(DBusValue.string)), .dictionary(key: "s", value: "v", hints), .int32(expireTimeout),
        ]
    }

    private func notify(_ arguments: [DBusValue]) async -> UInt32? {
        do {
            let reply = try await connection.call(destination: Self.busName, path: Self.objectPath, interface: Self.busName, member: "Notify", arguments: arguments, timeout: .seconds(5))
            guard let id = reply.first?.uint32Value else { throw DBusError.typeMismatch(expected: "u", actual: DBusValue.signature(of: reply)) }
            return id
        } catch {
            let count = failures.withLock { count in
                count += 1
                return count
            }
            if Self.shouldLog(count: count) { logger.warning("desktop notification failed (\(count) so far): \(error)") }
            return nil
        }
    }

    private func closeNotification(_ id: UInt32) async {
        _ = try? await connection.call(destination: Self.busName, path: Self.objectPath, interface: Self.busName, member: "CloseNotification", arguments: [.uint32(id)], timeout: .seconds(5))
    }

    /// On the bus thread: finds the notification a signal is about and sends what the person
    /// did. An answer ends the following, so a close the server sends after an action does
    /// not also dismiss the notification on the iPhone.
    private func received(_ signal: DBusSignal) {
        guard let id = signal.arguments.first?.uint32Value, signal.arguments.count == 2 else { return }
        let interaction: Banner.Interaction?
        let plan: DesktopNotificationPlan?
        switch signal.member {
        case "ActionInvoked":
            guard let key = signal.arguments[1].stringValue else { return }
            plan = tracking.withLock { $0.plans[id] }
            interaction = plan?.interaction(actionKey: key)
        case "NotificationReplied":
            guard let text = signal.arguments[1].stringValue else { return }
            plan = tracking.withLock { $0.plans[id] }
            interaction = plan?.interaction(reply: text)
        case "NotificationClosed":
            guard let reason = signal.arguments[1].uint32Value else { return }
            plan = tracking.withLock { $0.plans[id] }
            interaction = plan?.interaction(closedReason: reason)
            if let plan { _ = tracking.withLock { $0.forget(bannerID: plan.banner.identifier) } }
        default:
            return
        }
        guard let plan, let interaction, let request = plan.banner.request(for: interaction) else { return }
        _ = tracking.withLock { $0.forget(bannerID: plan.banner.identifier) }
        guard let responder = responder.withLock({ $0 }) else {
            logger.notice("a desktop notification was answered before the daemon could send answers")
            return
        }
        let logger = logger
        Task {
            let reply = await responder(request)
            if !reply.ok { logger.notice("the answer from a desktop notification was not sent: \(reply.message ?? "no reason given")") }
        }
    }
}

extension FreedesktopNotificationSink {
    /// On the bus thread: the server's name moved (a restart, or another server). The new
    /// server numbers its notifications afresh, so the ones followed are forgotten rather than
    /// answered under a stranger's ID.
    private func ownerChanged(_ signal: DBusSignal) {
        guard signal.arguments.count == 3, signal.arguments[0].stringValue == Self.busName else { return }
        tracking.withLock { $0 = Tracking() }
    }
}

extension FreedesktopNotificationSink.Tracking {
    mutating func track(_ id: UInt32, _ plan: DesktopNotificationPlan, limit: Int) {
        if let previous = serverID[plan.banner.identifier], previous != id {
            plans[previous] = nil
            order.removeAll { $0 == previous }
        }
        if plans[id] == nil { order.append(id) }
        serverID[plan.banner.identifier] = id
        plans[id] = plan
        while order.count > limit {
            let oldest = order.removeFirst()
            if let forgotten = plans.removeValue(forKey: oldest) { serverID[forgotten.banner.identifier] = nil }
        }
    }

    /// Stops following a notification; returns its server ID if it was followed.
    mutating func forget(bannerID: String) -> UInt32? {
        guard let id = serverID.removeValue(forKey: bannerID) else { return nil }
        plans[id] = nil
        order.removeAll { $0 == id }
        return id
    }
}
