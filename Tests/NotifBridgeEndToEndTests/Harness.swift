import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization

/// Collects what the accessory displayed, for assertions.
final class RecordingPresenter: Presenter {
    private let events = Mutex<[PresenterEvent]>([])
    func present(_ event: PresenterEvent) { events.withLock { $0.append(event) } }
    var all: [PresenterEvent] { events.withLock { $0 } }
    var resyncCount: Int { all.filter { if case .resync = $0 { true } else { false } }.count }
    /// Notifications shown as alerts (not merely listed).
    var alertCount: Int {
        all.filter { if case .notification(let record, .added) = $0 { record.alertDecision?.alerts == true } else { false } }.count
    }
    /// Waits (``TestWait``) until an event matching `predicate` was shown.
    func waitFor(_ what: String, _ predicate: (PresenterEvent) -> Bool) async throws {
        try await TestWait.until(what) { all.contains(where: predicate) }
    }

    var burstSummaries: [Int] { all.compactMap { if case .burstSummary(let count) = $0 { count } else { nil } } }
    var refusals: [String] { all.compactMap { if case .refused(let detail) = $0 { detail } else { nil } } }
}

/// An accessory daemon running in this process on a loopback port.
struct RunningAccessory {
    let daemon: AccessoryDaemon
    let presenter: RecordingPresenter
    let port: Int
    let task: Task<Void, any Error>

    static func start(
        stateDirectory: String,
        suite: CipherSuite = .xWing,
        limits: WireLimits = .default,
        resources: AccessoryConfiguration.ResourceLimits = .init(),
        policy: PolicyFile = .unlimitedBursts,
        sinks: [any AlertSink] = [],
        internet: (any InternetMessageSource)? = nil
    ) async throws -> RunningAccessory {
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: stateDirectory, port: 0, suite: suite, limits: limits, resources: resources),
            policy: policy,
            presenter: presenter,
            sinks: sinks,
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            // A run that ends before it listens ends the wait for the port too.
            defer { continuation.finish() }
            try await daemon.run(daemon.tcpSource(onListening: { continuation.yield($0) }), internet: internet)
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw HostFailure(description: "accessory did not start")
        }
        return RunningAccessory(daemon: daemon, presenter: presenter, port: port, task: task)
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

extension PolicyFile {
    /// Tests that count alerts one by one turn the burst limit out of the way.
    static let unlimitedBursts = PolicyFile(burst: .init(maxAlerts: 100_000, windowSeconds: 60))
}

enum TestHost {
    static func session(suites: [CipherSuite] = [.xWing, .p256]) -> HostSession {
        HostSession(configuration: .init(suites: suites, identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
    }

    static func note(_ id: String, title: String = "Anna Schmidt", body: String = "Lunch? 🍜") -> HostNotification {
        HostNotification(source: "com.apple.MobileSMS", id: id, sourceName: "Messages", title: title, body: body, thread: "chat-anna")
    }

    static func withActions(_ id: String) -> HostNotification {
        var n = note(id)
        n.actions = [
            .init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"),
            .init(id: "like", title: "👍", type: .background),
            .init(id: "com.apple.dismiss", title: "Dismiss", type: .dismiss),
        ]
        return n
    }

    /// The next response or removal the accessory sends, skipping other events.
    static func nextAccessoryMessage(_ connection: HostClient) async throws -> HostClientEvent {
        while let event = try await connection.nextEvent(timeout: .seconds(10)) {
            switch event {
            case .response, .removeOnPhone: return event
            default: continue
            }
        }
        throw HostFailure(description: "link closed before the accessory responded")
    }

    /// Sends operations in order and waits for all their receipts.
    static func forward(_ operations: [HostOperation], over connection: HostClient) async throws -> [UInt64: (stored: Bool, alerted: Bool)] {
        var sequences: Set<UInt64> = []
        for operation in operations {
            sequences.insert(try connection.send(operation))
        }
        return try await connection.waitForReceipts(sequences)
    }
}
