import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization

/// Collects what the accessory displayed, for assertions.
final class RecordingPresenter: Presenter {
    private let events = Mutex<[DisplayEvent]>([])
    func present(_ event: DisplayEvent) { events.withLock { $0.append(event) } }
    var all: [DisplayEvent] { events.withLock { $0 } }
    var resyncCount: Int { all.filter { if case .resync = $0 { true } else { false } }.count }
    var refusals: [String] { all.compactMap { if case .refused(let detail) = $0 { detail } else { nil } } }
}

/// An accessory daemon running in this process on a loopback port.
struct RunningAccessory {
    let daemon: AccessoryDaemon
    let presenter: RecordingPresenter
    let port: Int
    let task: Task<Void, any Error>

    static func start(stateDirectory: String, suite: CipherSuite = .xWing, limits: WireLimits = .default) async throws -> RunningAccessory {
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: stateDirectory, port: 0, suite: suite, limits: limits),
            presenter: presenter,
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await daemon.run(onListening: { continuation.yield($0) }) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw PhoneFailure(description: "accessory did not start") }
        return RunningAccessory(daemon: daemon, presenter: presenter, port: port, task: task)
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

enum TestPhone {
    static func session(suites: [CipherSuite] = [.xWing, .p256]) -> HostSession {
        HostSession(configuration: .init(suites: suites, identifier: SimulatorIdentity.accessoryIdentifier, featureID: SimulatorIdentity.featureID))
    }

    static func note(_ id: String, title: String = "Anna Schmidt", body: String = "Lunch? 🍜") -> HostNotification {
        HostNotification(source: "com.apple.MobileSMS", id: id, sourceName: "Messages", title: title, body: body, thread: "chat-anna")
    }

    /// Sends operations in order and waits for all their receipts.
    static func forward(_ operations: [HostOperation], over connection: PhoneConnection) async throws -> [UInt64: (stored: Bool, alerted: Bool)] {
        var sequences: Set<UInt64> = []
        for operation in operations {
            if let sequence = try connection.send(operation) { sequences.insert(sequence) }
        }
        return try await connection.waitForReceipts(sequences)
    }
}
