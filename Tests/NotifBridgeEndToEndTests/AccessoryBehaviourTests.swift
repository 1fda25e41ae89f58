import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeTestSupport
import Testing

/// What users of notification receivers expect (peers.md §3), end to end over loopback TCP.
@Suite("Accessory behaviour", .timeLimit(.minutes(3)))
struct AccessoryBehaviourTests {
    @Test("Replies, actions, dismissals and clears travel back sealed and reach the iPhone")
    func repliesAndActions() async throws {
        let directory = try TemporaryDirectory("behaviour")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        let source = "com.apple.MobileSMS"

        let noPhone = try await accessory.daemon.control.list(ControlRequest(op: .list)) { _ in }
        #expect(noPhone == ControlReply(ok: true, count: 0))

        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            _ = try await TestHost.forward([.add(TestHost.withActions("m1"), .standard), .add(TestHost.withActions("m2"), .standard)], over: phone)

            // A text reply, through the library API.
            let reply = await accessory.daemon.control.respond(ControlRequest(op: .reply, source: source, id: "m1", action: "reply", text: "On my way 🏃"))
            #expect(reply.ok, "\(reply.message ?? "")")
            guard case .response(let s, let id, let action, let text) = try await TestHost.nextAccessoryMessage(phone) else {
                Issue.record("expected a NotificationResponse")
                return
            }
            #expect([s, id, action] == [source, "m1", "reply"])
            #expect(text == "On my way 🏃")

            // An action, through the control socket, as `notifbridge respond action` sends it.
            let socket = accessory.daemon.configuration.controlSocketPath
            let like = try await ControlClient.send(ControlRequest(op: .action, source: source, id: "m2", action: "like"), socketPath: socket)
            #expect(like.ok)
            guard case .response(_, "m2", "like", nil) = try await TestHost.nextAccessoryMessage(phone) else {
                Issue.record("expected the like action without text")
                return
            }

            // Dismiss uses the notification's dismiss action and removes it here.
            #expect(try await ControlClient.send(ControlRequest(op: .dismiss, source: source, id: "m1"), socketPath: socket).ok)
            guard case .response(_, "m1", "com.apple.dismiss", nil) = try await TestHost.nextAccessoryMessage(phone) else {
                Issue.record("expected the dismiss action")
                return
            }
            #expect(try accessory.daemon.store.notification(source: source, id: "m1")?.removed == true)
            // Presented as it is stored now, removed (JSON output's "removed" said false).
            try await accessory.presenter.waitFor("m1 presented as removed") {
                if case .notification(let record, .removed) = $0 { record.notificationIdentifier == "m1" } else { false }
            }
            let presentedRemoval = accessory.presenter.all.compactMap {
                if case .notification(let record, .removed) = $0, record.notificationIdentifier == "m1" { record } else { nil }
            }
            #expect(presentedRemoval.map(\.removed) == [true])

            // Clear asks the phone to remove it (session.removeNotifications).
            #expect(try await ControlClient.send(ControlRequest(op: .clear, source: source, id: "m2"), socketPath: socket).ok)
            guard case .removeOnPhone(let ids) = try await TestHost.nextAccessoryMessage(phone) else {
                Issue.record("expected a removal request")
                return
            }
            #expect(ids.map(\.id) == ["m2"])

            // Refusals say what was wrong and send nothing.
            _ = try await TestHost.forward([.add(TestHost.withActions("m3"), .standard)], over: phone)
            let wrongType = await accessory.daemon.control.respond(ControlRequest(op: .reply, source: source, id: "m3", action: "like", text: "x"))
            #expect(!wrongType.ok && wrongType.message?.contains("does not take text") == true)
            let unknownAction = await accessory.daemon.control.respond(ControlRequest(op: .action, source: source, id: "m3", action: "nope"))
            #expect(!unknownAction.ok && unknownAction.message?.contains("has no action \"nope\"") == true)
            let unnamed = await accessory.daemon.control.respond(ControlRequest(op: .reply, source: source, id: "m3", text: "x"))
            #expect(unnamed.message == "reply needs the action to take (\"action\"); \(source)/m3 has: reply (text input), like (background), com.apple.dismiss (dismiss)", "\(unnamed.message ?? "")")
            let gone = await accessory.daemon.control.respond(ControlRequest(op: .action, source: source, id: "m1", action: "like"))
            #expect(!gone.ok, "a dismissed notification cannot be acted on")
            // `respond list --all` still shows it, so the refusal says it was removed, not that it is unknown.
            #expect(gone.message?.contains("\(source)/m1 was removed") == true, "\(gone.message ?? "")")
            let unknown = await accessory.daemon.control.respond(ControlRequest(op: .action, source: source, id: "m9", action: "like"))
            #expect(unknown.message?.contains("no notification \(source)/m9 on this accessory") == true, "\(unknown.message ?? "")")
            let tooLong = await accessory.daemon.control.respond(ControlRequest(op: .reply, source: source, id: "m3", action: "reply", text: String(repeating: "x", count: ContentLimits.maxTextFieldLength + 1)))
            #expect(!tooLong.ok)
        }
        try await accessory.presenter.waitFor("the disconnect") { if case .disconnected = $0 { true } else { false } }
        let afterwards = await accessory.daemon.control.respond(ControlRequest(op: .action, source: source, id: "m3", action: "like"))
        #expect(afterwards.message?.contains("no iPhone is connected") == true)
    }

    @Test("Re-sending 50 after a reconnect, a new exchange and a daemon restart: no duplicate, no second alert")
    func catchUpWithoutDuplicates() async throws {
        let directory = try TemporaryDirectory("behaviour")
        defer { directory.remove() }
        let fifty: [HostOperation] = (1...50).map { .add(TestHost.note("n\($0)", body: "message \($0)"), .standard) }

        var accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        let first = accessory
        var (receipts, session) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            return try await TestHost.forward(fifty, over: phone)
        }
        #expect(receipts.values.filter { $0.alerted }.count == 50)
        #expect(accessory.presenter.alertCount == 50)

        // Reconnect (the exchange resumes) and re-send everything.
        (receipts, session) = try await HostClient.connect(host: "127.0.0.1", port: first.port, session: session) { phone in
            #expect(try await phone.waitUntilEstablished().resumed)
            return try await TestHost.forward(fifty, over: phone)
        }
        #expect(receipts.count == 50 && receipts.values.allSatisfy { !$0.alerted })

        // A different iPhone session (a new exchange, which replaces the first) re-sends them too.
        (receipts, session) = try await HostClient.connect(host: "127.0.0.1", port: first.port, session: TestHost.session()) { phone in
            #expect(try await !phone.waitUntilEstablished().resumed)
            return try await TestHost.forward(fifty, over: phone)
        }
        #expect(receipts.count == 50 && receipts.values.allSatisfy { !$0.alerted })
        #expect(accessory.presenter.alertCount == 50)
        #expect(try accessory.daemon.store.notifications().count == 50)

        // Restart the daemon; the latest iPhone session resumes and re-sends once more.
        await accessory.stop()
        accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        let restarted = accessory
        defer { Task { await restarted.stop() } }
        (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: restarted.port, session: session) { phone in
            #expect(try await phone.waitUntilEstablished().resumed)
            return try await TestHost.forward(fifty + [.add(TestHost.note("new"), .standard)], over: phone)
        }
        #expect(receipts.values.filter { $0.alerted }.count == 1, "only the genuinely new one alerts")
        #expect(accessory.presenter.alertCount == 1)
        #expect(try accessory.daemon.store.notifications().count == 51)
    }

    @Test("A burst of 500 alerts at most the configured number of times, and stores every one")
    func burst() async throws {
        let directory = try TemporaryDirectory("behaviour")
        defer { directory.remove() }
        let policy = PolicyFile(burst: .init(maxAlerts: 5, windowSeconds: 600))
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, policy: policy)
        defer { Task { await accessory.stop() } }
        let burst: [HostOperation] = (1...500).map { .add(TestHost.note("b\($0)", body: "burst \($0)"), .standard) }
        let (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            return try await TestHost.forward(burst, over: phone)
        }
        #expect(receipts.count == 500)
        #expect(receipts.values.filter { $0.alerted }.count <= 5)
        #expect(accessory.presenter.alertCount <= 5)
        let stored = try accessory.daemon.store.notifications()
        #expect(stored.count == 500)
        #expect(stored.filter { $0.alertDecision?.reason.contains("burst") == true }.count == 495)
    }

    @Test("The hook runs once per alert with the decision and the notification as JSON")
    func hook() async throws {
        let directory = try TemporaryDirectory("behaviour")
        defer { directory.remove() }
        let output = directory.path + "/alerts.jsonl"
        let sink = HookAlertSink(settings: .init(command: ["/bin/sh", "-c", "cat >> \"$0\"", output], timeoutSeconds: 5), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), gate: LogGate(LogThrottle()))
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, sinks: [sink])
        defer { Task { await accessory.stop() } }
        let silent = HostAlerting(shouldAlert: false, suppressedByFocus: true)
        let operations: [HostOperation] = [.add(TestHost.note("loud"), .standard), .add(TestHost.note("quiet"), silent)]
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            _ = try await TestHost.forward(operations, over: phone)
        }
        #expect(await sink.waitUntilIdle(timeout: .seconds(10)))
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1, "only the alerting notification runs the hook")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["event"] as? String == "notification")
        #expect((object["notification"] as? [String: Any])?["id"] as? String == "loud")
        #expect((object["decision"] as? [String: Any])?["presentation"] as? String == "alert")
    }

    @Test("Over-limit content is refused with a reason while the next notification is delivered")
    func overLimit() async throws {
        let directory = try TemporaryDirectory("behaviour")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        var tooManyActions = TestHost.note("actions")
        tooManyActions.actions = (0...ContentLimits.maxActions).map { .init(id: "a\($0)", title: nil, type: .background) }
        var bigAttachment = TestHost.note("attachment")
        bigAttachment.attachments = [.init(type: "public.jpeg", base64: Data(repeating: 1, count: ContentLimits.maxAttachmentBytes + 1).base64EncodedString())]
        var fitsAttachment = TestHost.note("fits")
        fitsAttachment.attachments = [.init(type: "public.jpeg", base64: Data(repeating: 1, count: ContentLimits.maxAttachmentBytes).base64EncodedString())]

        let operations: [HostOperation] = [.add(tooManyActions, .standard), .add(bigAttachment, .standard), .add(fitsAttachment, .standard)]
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            let receipts = try await TestHost.forward(operations, over: phone)
            #expect(receipts[1]?.stored == false)
            #expect(receipts[2]?.stored == false)
            #expect(receipts[3]?.stored == true)
        }
        #expect(accessory.presenter.refusals.count == 2)
        #expect(accessory.presenter.refusals.allSatisfy { $0.contains("at most") })
        #expect(try accessory.daemon.store.notifications().map(\.notificationIdentifier) == ["fits"])
    }
}
