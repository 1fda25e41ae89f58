import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import ServiceLifecycle
import Synchronization
import Testing

/// `AccessoryService`'s stop, as systemd's SIGTERM drives it through the service group: the
/// alert sinks (hooks) are ended once the daemon has stopped, while the store is still open.
@Suite("The accessory service's stop", .timeLimit(.minutes(1)))
struct ServiceStopTests {
    /// Records each `stop()`, and whether the daemon's store still answered then.
    final class StopRecorder: AlertSink {
        let storeOpenAtStops = Mutex<[Bool]>([])
        let daemon = Mutex<AccessoryDaemon?>(nil)

        func alert(_ event: AlertEvent) {}

        func stop() async {
            let open = daemon.withLock { $0 }.map { (try? $0.store.notifications()) != nil } ?? false
            storeOpenAtStops.withLock { $0.append(open) }
        }
    }

    @Test("A graceful shutdown stops the alert sinks once, before the store is closed")
    func sinksStoppedBeforeStoreCloses() async throws {
        let directory = try TemporaryDirectory("service-stop")
        defer { directory.remove() }
        let logger = Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        let recorder = StopRecorder()
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0), presenter: presenter, sinks: [recorder], logger: logger)
        recorder.daemon.withLock { $0 = daemon }
        let (links, handOver) = AsyncStream.makeStream(of: ChunkLink.self)
        defer { handOver.finish() }
        let service = AccessoryService(daemon: daemon, source: StreamLinkSource(links, announcing: .connected(peer: "test")))
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: logger))
        let running = Task { try await group.run() }
        try await presenter.waitFor("the daemon to be ready") { if case .connected = $0 { true } else { false } }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(recorder.storeOpenAtStops.withLock { $0 } == [true])
        #expect((try? daemon.store.notifications()) == nil, "the store is closed once the service returns")
    }
}
