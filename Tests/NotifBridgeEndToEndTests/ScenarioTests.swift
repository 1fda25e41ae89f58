import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeScenario
import NotifBridgeStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// An in-process accessory that a scenario can restart on the same state directory.
final class RestartableAccessory: ScenarioEnvironment {
    let directory: String
    private let current: Mutex<RunningAccessory>
    private let restarts = Mutex(0)
    /// What earlier runs displayed before they were stopped.
    private let earlier = Mutex<[PresenterEvent]>([])

    init(directory: String) async throws {
        self.directory = directory
        current = Mutex(try await RunningAccessory.start(stateDirectory: directory, policy: .unlimitedBursts))
    }

    var accessory: RunningAccessory { current.withLock { $0 } }
    var restartCount: Int { restarts.withLock { $0 } }
    /// Everything every run of the accessory displayed, in order.
    var displayed: [PresenterEvent] { earlier.withLock { $0 } + accessory.presenter.all }

    func endpoint() async throws -> AccessoryEndpoint { .tcp(host: "127.0.0.1", port: accessory.port) }

    func restartAccessory() async throws {
        let stopping = accessory
        await stopping.stop()
        earlier.withLock { $0 += stopping.presenter.all }
        let next = try await RunningAccessory.start(stateDirectory: directory, policy: .unlimitedBursts)
        current.withLock { $0 = next }
        restarts.withLock { $0 += 1 }
    }

    func observe() async throws -> [ObservedNotification] {
        var observed: [ObservedNotification] = []
        let end = try await accessory.daemon.control.list(ControlRequest(op: .list)) {
            observed.append(ObservedNotification(ref: NotificationRef(source: $0.source, id: $0.id), title: $0.title, body: $0.body, alerted: $0.alerted))
        }
        guard end.ok else { throw HostFailure(description: end.message ?? "list failed") }
        return observed
    }
}

@Suite("Scenarios", .timeLimit(.minutes(3)))
struct ScenarioTests {
    @Test("Every scenario in Scenarios/ plays end to end and its expectations hold", arguments: TestFixtures.scenarioNames)
    func scenario(file: String) async throws {
        let yaml = try String(contentsOf: TestFixtures.scenarios.appendingPathComponent(file), encoding: .utf8)
        let scenario = try ScenarioFile.parse(yaml)
        let directory = try TemporaryDirectory("scenario")
        defer { directory.remove() }
        let environment = try await RestartableAccessory(directory: directory.path)
        let exchanges = Mutex<[Bool]>([])
        let player = ScenarioPlayer(scenario: scenario, environment: environment, onEvent: { event in
            if case .established(_, _, let resumed) = event { exchanges.withLock { $0.append(resumed) } }
        })
        let report = try await player.play(session: TestHost.session())
        defer { Task { await environment.accessory.stop() } }

        #expect(report.failures == [], "\(file): \(report.failures.joined(separator: "; "))")
        #expect(report.acknowledged == report.sent, "\(file): every call was acknowledged")
        #expect(environment.restartCount == scenario.steps.filter { $0 == .restartAccessory }.count)
        // One key exchange; every later link, across restarts too, resumes it.
        #expect(exchanges.withLock { $0 } == [false] + Array(repeating: true, count: report.links - 1))
        if scenario.steps.contains(where: { if case .disconnect = $0 { true } else { false } }) || scenario.restartsAccessory {
            #expect(report.links > 1)
        }
        // Whatever was replayed over several links, nothing alerted twice.
        let alertedIDs = environment.displayed.compactMap { event -> String? in
            if case .notification(let record, .added) = event, record.alertDecision?.alerts == true { return record.notificationIdentifier }
            return nil
        }
        #expect(alertedIDs.count == Set(alertedIDs).count, "\(file): alerted more than once: \(alertedIDs)")
        let stored = try environment.accessory.daemon.store.notifications(includeRemoved: true)
        #expect(stored.count == Set(stored.map { "\($0.sourceIdentifier)/\($0.notificationIdentifier)" }).count, "one record per notification")
    }

    /// A call the accessory refuses is acknowledged as not stored: the report counts it, and the
    /// scenario passes because it says `absent` for it.
    @Test("A refused add is counted as not stored in the report")
    func refusedAddCounted() async throws {
        let title = String(repeating: "t", count: 5000)
        let scenario = try ScenarioFile.parse("""
            name: refused
            steps:
              - add: {id: big, title: \(title)}
              - add: {id: small, title: Fine}
            expect:
              present: [small]
              absent: [big]
            """)
        let directory = try TemporaryDirectory("scenario-refused")
        defer { directory.remove() }
        let environment = try await RestartableAccessory(directory: directory.path)
        let report = try await ScenarioPlayer(scenario: scenario, environment: environment).play(session: TestHost.session())
        defer { Task { await environment.accessory.stop() } }
        #expect(report.acknowledged == 2 && report.notStored == 1 && report.passed)
        #expect(report.description.hasPrefix("2 calls forwarded over 1 link(s), 2 acknowledged (1 not stored), "), "\(report)")
    }

    @Test("The scenario suite covers a disconnect mid-message, an accessory restart and a reorder attempt")
    func coverage() throws {
        let steps = try TestFixtures.scenarioNames.flatMap { name in
            try ScenarioFile.parse(String(contentsOf: TestFixtures.scenarios.appendingPathComponent(name), encoding: .utf8)).steps
        }
        #expect(steps.contains { if case .disconnect(during: .some) = $0 { true } else { false } })
        #expect(steps.contains(.restartAccessory))
        #expect(steps.contains { if case .reorder = $0 { true } else { false } })
        #expect(steps.contains(.focus(true)))
    }
}
