import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeCrypto
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import NotifBridgeDesktop
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// What a desktop notification shows for each server, and what each signal sends back.
@Suite("Desktop notification plans")
struct DesktopNotificationPlanTests {
    private static func record(body: String = "See you at 8") -> StoredNotification {
        var n = WireNotification()
        n.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "m1")
        n.sourceName = "Messages"
        n.title = "Anna"
        n.body = .with { $0.runs = [.with { $0.text = body }] }
        n.actions = [
            .with { $0.identifier = "reply"; $0.title = "Reply"; $0.type = .textInput; $0.placeholder = "Message" },
            .with { $0.identifier = "like"; $0.title = "Like"; $0.type = .background },
            .with { $0.identifier = "com.apple.dismiss"; $0.title = "Dismiss"; $0.type = .dismiss },
        ]
        return StoredNotification(notification: n, alerting: nil, removed: false, revision: .init(epoch: 1, sequence: 1), receivedAt: Date(), updatedAt: Date())
    }

    @Test("Buttons and the inline reply follow the server's capabilities", arguments: [
        ([], [], false),
        (["actions"], ["button:like", "Like"], false),
        (["actions", "inline-reply"], ["inline-reply", "Reply", "button:like", "Like"], true),
        (["inline-reply"], [], false),
    ] as [([String], [String], Bool)])
    func capabilities(capabilities: [String], actions: [String], inlineReply: Bool) {
        let plan = DesktopNotificationPlan(Self.record(), decision: nil, capabilities: Set(capabilities))
        #expect(plan.actions == actions)
        #expect((plan.inlineReply != nil) == inlineReply)
        #expect(plan.hints.contains { $0.0 == "x-kde-reply-placeholder-text" } == inlineReply)
        #expect(plan.summary == "Anna" && plan.urgency == 1 && plan.expireTimeout == -1)
    }

    /// By scalar: a `<` or `&` that a combining mark joins to what follows is one `Character`,
    /// and it went out raw.
    @Test("Peer text is escaped only for a server that reads markup", arguments: [
        ("<b>&'\"</b>", false, "<b>&'\"</b>"), ("<b>&'\"</b>", true, "&lt;b&gt;&amp;&apos;&quot;&lt;/b&gt;"),
        ("<\u{301}b>&\u{FE0F}amp;", true, "&lt;\u{301}b&gt;&amp;\u{FE0F}amp;"),
    ])
    func markup(body: String, bodyMarkup: Bool, shown: String) {
        let plan = DesktopNotificationPlan(Self.record(body: body), decision: nil, capabilities: bodyMarkup ? ["body-markup"] : [])
        #expect(Array(plan.body.unicodeScalars) == Array(shown.unicodeScalars))
    }

    @Test("What each signal sends", arguments: [
        ("action", "button:like", ControlRequest(op: .action, source: "com.apple.MobileSMS", id: "m1", action: "like")),
        ("action", "like", nil),
        ("action", "default", nil),
        ("action", "inline-reply", nil),
        ("reply", "On my way", ControlRequest(op: .reply, source: "com.apple.MobileSMS", id: "m1", action: "reply", text: "On my way")),
        ("closed", "2", ControlRequest(op: .dismiss, source: "com.apple.MobileSMS", id: "m1")),
        ("closed", "1", nil),
        ("closed", "3", nil),
    ] as [(String, String, ControlRequest?)])
    func signals(signal: String, argument: String, expected: ControlRequest?) {
        let plan = DesktopNotificationPlan(Self.record(), decision: nil, capabilities: ["actions", "inline-reply"])
        let interaction: Banner.Interaction? = switch signal {
        case "action": plan.interaction(actionKey: argument)
        case "reply": plan.interaction(reply: argument)
        default: plan.interaction(closedReason: UInt32(argument)!)
        }
        #expect(interaction.flatMap(plan.banner.request(for:)) == expected)
    }

    @Test("A call or a critical alert stays until acted on, at critical urgency")
    func persistent() {
        let decision = AlertDecision(presentation: .alert, sound: .evenInSilentMode, haptic: .ring, persistent: true, reason: "call", urgent: true)
        let plan = DesktopNotificationPlan(Self.record(), decision: decision, capabilities: [])
        #expect(plan.urgency == 2 && plan.expireTimeout == 0)
    }
}

/// The sink against a notification server on a private bus, with the accessory daemon and the
/// simulated iPhone over loopback: a button, an inline reply and a dismissal reach the iPhone;
/// an update replaces the desktop notification and a removal closes it.
@Suite("Desktop notifications over D-Bus", .enabled(if: PrivateBusDaemon.isAvailable), .timeLimit(.minutes(2)))
struct DesktopNotificationBusTests {
    static let source = "com.apple.MobileSMS"

    private static func note(_ id: String, title: String = "Anna Schmidt") -> HostNotification {
        var n = HostNotification(source: source, id: id, sourceName: "Messages", title: title, body: "Lunch? 🍜", thread: "chat-anna")
        n.actions = [
            .init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"),
            .init(id: "like", title: "👍", type: .background),
            .init(id: "com.apple.dismiss", title: "Dismiss", type: .dismiss),
        ]
        return n
    }

    private static func nextResponse(_ phone: HostClient) async throws -> HostClientEvent? {
        while let event = try await phone.nextEvent(timeout: .seconds(10)) {
            if case .response = event { return event }
        }
        return nil
    }

    /// A private bus with a notification server, an accessory whose desktop sink uses it, and
    /// the simulated iPhone connected to that accessory, for the length of `body`.
    private static func withDesktop(
        _ body: @Sendable (_ bus: DBusBusAddress, _ server: FakeNotificationServer, _ sink: FreedesktopNotificationSink, _ phone: HostClient) async throws -> Void
    ) async throws {
        let bus = try PrivateBusDaemon()
        defer { bus.stop() }
        let server = try await FakeNotificationServer(address: bus.address, capabilities: ["actions", "body", "body-markup", "inline-reply"])
        defer { server.connection.close() }
        let logger = Logger(label: "test.desktop", factory: { _ in SwiftLogNoOpLogHandler() })
        let sink = try await FreedesktopNotificationSink.connect(to: bus.address, logger: logger)
        defer { sink.close() }
        #expect(sink.capabilities.contains("inline-reply"))

        let directory = try TemporaryDirectory("desktop")
        defer { directory.remove() }
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, suite: .xWing),
            policy: PolicyFile(burst: .init(maxAlerts: 100_000, windowSeconds: 60)),
            presenter: SilentPresenter(),
            sinks: [sink],
            logger: logger
        )
        sink.respond(using: daemon.control.respond)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await daemon.run(onListening: { listening.yield($0) }) }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let address = bus.address
        let session = HostSession(configuration: .init(suites: [.xWing], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
        _ = try await HostClient.connect(host: "127.0.0.1", port: port, session: session) { phone in
            try await phone.waitUntilEstablished()
            try await body(address, server, sink, phone)
        }
    }

    private static func forward(_ operation: HostOperation, _ phone: HostClient) async throws {
        _ = try await phone.waitForReceipts([try phone.send(operation)])
    }

    @Test("Buttons, inline replies and dismissals reach the iPhone; updates replace, removals close")
    func roundTrip() async throws {
        try await Self.withDesktop { _, server, sink, phone in
            func forward(_ operation: HostOperation) async throws { try await Self.forward(operation, phone) }
            /// A person answers only what is on screen: once the sink has the server's ID.
            func waitUntilFollowed(_ count: Int) async throws {
                try await server.waitFor("the sink to follow \(count)") { _ in sink.trackedCount == count }
            }

            // A button.
            try await forward(.add(Self.note("m1"), .standard))
            try await server.waitFor("the first desktop notification") { $0.posted.count == 1 }
            let first = server.posted[0]
            #expect(first.summary == "Anna Schmidt")
            #expect(first.actions == ["inline-reply", "Reply", "button:like", "👍"])
            #expect(first.hints["x-kde-reply-placeholder-text"] == .string("Message"))
            try await waitUntilFollowed(1)
            try await server.emit("ActionInvoked", [.uint32(first.id), .string("button:like")])
            guard case .response(_, "m1", "like", nil)? = try await Self.nextResponse(phone) else {
                Issue.record("the button did not reach the iPhone")
                return
            }
            // The close a server sends after an action sends nothing more.
            try await server.emit("NotificationClosed", [.uint32(first.id), .uint32(2)])

            // An inline reply.
            try await forward(.add(Self.note("m2"), .standard))
            try await server.waitFor("the second desktop notification") { $0.posted.count == 2 }
            try await waitUntilFollowed(1)
            try await server.emit("NotificationReplied", [.uint32(server.posted[1].id), .string("On my way 🏃")])
            guard case .response(_, "m2", "reply", "On my way 🏃")? = try await Self.nextResponse(phone) else {
                Issue.record("the inline reply did not reach the iPhone")
                return
            }

            // An update replaces the same desktop notification; a removal closes it.
            try await forward(.add(Self.note("m3"), .standard))
            try await server.waitFor("the third desktop notification") { $0.posted.count == 3 }
            let third = server.posted[2].id
            try await forward(.update(Self.note("m3", title: "Anna (edited)")))
            try await server.waitFor("the update") { $0.posted.count == 4 }
            #expect(server.posted[3].replaces == third && server.posted[3].summary == "Anna (edited)")
            try await forward(.remove(source: Self.source, id: "m3"))
            try await server.waitFor("the close") { $0.closed.contains(third) }

            // Dismissed on the desktop: the dismiss action goes to the iPhone.
            try await forward(.add(Self.note("m4"), .standard))
            try await server.waitFor("the fourth desktop notification") { $0.posted.count == 5 }
            try await waitUntilFollowed(1)
            try await server.emit("NotificationClosed", [.uint32(server.posted[4].id), .uint32(2)])
            guard case .response(_, "m4", "com.apple.dismiss", nil)? = try await Self.nextResponse(phone) else {
                Issue.record("the dismissal did not reach the iPhone")
                return
            }
            #expect(sink.trackedCount == 0)
        }
    }

    /// Any connection on the session bus can address a signal to the sink itself, past its match
    /// rule. Only the notification server's own are the person's answers, and a forged change
    /// of the server's owner does not make the forger the server.
    @Test("A signal from another connection, addressed to the sink, answers nothing")
    func forgedSignals() async throws {
        try await Self.withDesktop { bus, server, sink, phone in
            try await Self.forward(.add(Self.note("m1"), .standard), phone)
            try await server.waitFor("the sink to follow the notification") { _ in sink.trackedCount == 1 }
            let id = server.posted[0].id
            let target = try #require(server.client)
            let forger = try await DBusConnection.connect(to: bus)
            defer { forger.close() }
            func forge(_ member: String, _ arguments: [DBusValue], interface: String = "org.freedesktop.Notifications", path: String = "/org/freedesktop/Notifications") async throws {
                try await forger.emit(DBusSignal(path: path, interface: interface, member: member, arguments: arguments, destination: target))
            }
            try await forge("NotificationReplied", [.uint32(id), .string("forged")])
            try await forge("ActionInvoked", [.uint32(id), .string("button:like")])
            // The forger names itself the server's new owner, then answers as the server.
            try await forge(
                "NameOwnerChanged", [.string("org.freedesktop.Notifications"), .string(server.connection.uniqueName), .string(forger.uniqueName)],
                interface: "org.freedesktop.DBus", path: "/org/freedesktop/DBus"
            )
            try await forge("NotificationClosed", [.uint32(id), .uint32(2)])
            await #expect(throws: HostTimeout.self) { _ = try await phone.nextEvent(timeout: .seconds(1)) }
            #expect(sink.trackedCount == 1, "the forged close did not end the following")

            // The server's own answer still counts.
            try await server.emit("ActionInvoked", [.uint32(id), .string("button:like")])
            guard case .response(_, "m1", "like", nil)? = try await Self.nextResponse(phone) else {
                Issue.record("the server's button did not reach the iPhone")
                return
            }
        }
    }
}

/// The daemon's terminal output is not under test here.
final class SilentPresenter: Presenter {
    func present(_ event: PresenterEvent) {}
}
