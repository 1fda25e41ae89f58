import Foundation
import Logging
import NotifBridgeANCS
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// An iPhone's ANCS service played by the server model behind an in-process port: what the
/// daemon stores, shows and alerts, the catch-up after a reconnect, and actions from
/// `respond` reaching the Control Point.
final class ModelANCSPort: ANCSPort {
    static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_02"
    let events: AsyncStream<ANCSPortEvent>
    private let continuation: AsyncStream<ANCSPortEvent>.Continuation
    let model = Mutex(ANCSServer())
    let performed = Mutex<[(UInt32, ANCSActionID)]>([])
    /// How long the next Control Point write takes after its reply is sent, as when the daemon
    /// stalls: the reply then waits in the runner's queue.
    let nextWriteStall = Mutex<Duration?>(nil)

    init() {
        (events, continuation) = AsyncStream.makeStream(of: ANCSPortEvent.self)
        model.withLock { $0.appNames["com.apple.MobileSMS"] = "Messages" }
    }

    func writeControlPoint(_ bytes: [UInt8], device: String) async throws {
        switch model.withLock({ $0.handleControlPoint(bytes) }) {
        case .dataSource(let reply):
            // As over the air: a reply in pieces of an ATT payload (MTU 23 − 3).
            for start in stride(from: 0, to: reply.count, by: 20) {
                continuation.yield(.dataSource(device: device, Array(reply[start..<min(start + 20, reply.count)])))
            }
        case .performed(let uid, let action):
            performed.withLock { $0.append((uid, action)) }
        case .error(let error):
            throw error
        }
        if let stall = nextWriteStall.withLock({ $0.take() }) { try await Task.sleep(for: stall) }
    }

    func connect() {
        continuation.yield(.ready(device: Self.device))
        for bytes in model.withLock({ $0.announceAll() }) {
            continuation.yield(.notificationSource(device: Self.device, bytes))
        }
    }

    func disconnect() { continuation.yield(.gone(device: Self.device)) }

    /// The transport has stopped (bluetoothd went away): the port's events end.
    func finish() { continuation.finish() }

    func post(_ uid: UInt32, title: String, flags: ANCSEventFlags = [], connected: Bool = true) {
        let notification = ANCSNotification(
            uid: uid, flags: flags, category: .social, appIdentifier: "com.apple.MobileSMS", appName: nil,
            title: title, subtitle: "", message: "Message \(uid)", date: nil,
            positiveActionLabel: flags.contains(.positiveAction) ? "Reply" : nil,
            negativeActionLabel: flags.contains(.negativeAction) ? "Clear" : nil
        )
        let bytes = model.withLock { $0.post(notification, preExisting: false) }
        if connected { continuation.yield(.notificationSource(device: Self.device, bytes)) }
    }

    func remove(_ uid: UInt32, connected: Bool = true) {
        guard let bytes = model.withLock({ $0.remove(uid: uid) }), connected else { return }
        continuation.yield(.notificationSource(device: Self.device, bytes))
    }
}

@Suite("ANCS through the daemon", .timeLimit(.minutes(1)))
struct ANCSDaemonTests {
    static func shown(_ id: String, _ change: PresenterEvent.Change) -> (PresenterEvent) -> Bool {
        { if case .notification(let record, change) = $0 { record.notificationIdentifier == id } else { false } }
    }

    /// A daemon on a loopback port with the model iPhone's ANCS port beside its links.
    static func start(in directory: TemporaryDirectory) throws -> (AccessoryDaemon, RecordingPresenter, ModelANCSPort, Task<Void, any Error>) {
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0),
            policy: .unlimitedBursts,
            presenter: presenter,
            logger: Logger(label: "test.ancs", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let port = ModelANCSPort()
        let task = Task { try await daemon.run(daemon.tcpSource(), ancs: port) }
        return (daemon, presenter, port, task)
    }

    @Test("Notifications are stored and alert by policy, actions reach the Control Point, a reconnect withdraws what went")
    func endToEnd() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (daemon, presenter, port, task) = try Self.start(in: directory)
        defer { task.cancel() }

        port.connect()
        port.post(1, title: "Anna")
        port.post(2, title: "Ben", flags: [.important, .positiveAction, .negativeAction])
        try await presenter.waitFor("ancs:2 added", Self.shown("ancs:2", .added))
        let listed: [StoredNotification] = try daemon.store.notifications(includeRemoved: false)
        #expect(Set(listed.map(\.notificationIdentifier)) == ["ancs:1", "ancs:2"])
        #expect(listed.allSatisfy { $0.alerted }, "new ANCS notifications alert like any other")
        #expect(listed.first { $0.notificationIdentifier == "ancs:2" }?.notification.category == .social)

        var rows: [ListedNotification] = []
        _ = try await daemon.control.list(ControlRequest(op: .list)) { rows.append($0) }
        #expect(rows.first { $0.id == "ancs:2" }?.category == "social", "respond list names the ANCS category")

        let action = await daemon.control.respond(ControlRequest(op: .action, source: "com.apple.MobileSMS", id: "ancs:2", action: "ancs.positive"))
        #expect(action.ok, "\(action)")
        #expect(port.performed.withLock { $0.map(\.0) } == [2])
        let reply = await daemon.control.respond(ControlRequest(op: .reply, source: "com.apple.MobileSMS", id: "ancs:2", action: "ancs.positive", text: "hi"))
        #expect(!reply.ok)
        #expect(reply.message?.contains("ANCS") == true)

        // Away: 1 is removed on the iPhone and 3 posted; back, the iPhone announces 2 and 3.
        port.disconnect()
        port.remove(1, connected: false)
        port.post(3, title: "Carla", connected: false)
        port.connect()
        port.post(4, title: "Dana")
        try await presenter.waitFor("ancs:1 withdrawn", Self.shown("ancs:1", .removed))
        try await presenter.waitFor("ancs:4 added", Self.shown("ancs:4", .added))
        let after: [StoredNotification] = try daemon.store.notifications(includeRemoved: false)
        #expect(Set(after.map(\.notificationIdentifier)) == ["ancs:2", "ancs:3", "ancs:4"])
        #expect(after.first { $0.notificationIdentifier == "ancs:3" }?.alerted == false, "a pre-existing notification is caught up, not alerted")
    }

    /// The runner held up past the reply timeout (here by the write itself; in life by a slow
    /// commit) finds the reply waiting in its queue: it is read, not dropped as overdue.
    @Test("A reply that waited in the queue while the runner was held up past the reply timeout is read")
    func replyWaitedWhileHeldUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, presenter, port, task) = try Self.start(in: directory)
        defer { task.cancel() }
        port.nextWriteStall.withLock { $0 = ANCSClient.Limits().replyTimeout + .seconds(1) }
        port.connect()
        port.post(5, title: "Fay")
        try await presenter.waitFor("ancs:5 added", Self.shown("ancs:5", .added))
    }

    @Test("Once the ANCS port has stopped, an action says that nothing was sent")
    func afterThePortStopped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (daemon, presenter, port, task) = try Self.start(in: directory)
        defer { task.cancel() }
        port.connect()
        port.post(7, title: "Erin", flags: [.positiveAction])
        try await presenter.waitFor("ancs:7 added", Self.shown("ancs:7", .added))
        port.finish()
        var reply = ControlReply.success("not asked yet")
        try await TestWait.until("an action to fail once the port stopped") {
            reply = await daemon.control.respond(ControlRequest(op: .action, source: "com.apple.MobileSMS", id: "ancs:7", action: "ancs.positive"))
            return !reply.ok
        }
        #expect(!reply.ok)
        #expect(reply.message?.contains("no iPhone is connected over ANCS") == true, "\(String(describing: reply.message))")
    }
}
