import Foundation
import NotifBridgeHostCore
import NotifBridgeScenario
import NotifBridgeWire
import Synchronization

/// Where the simulated iPhone finds the accessory for its next link.
public enum AccessoryEndpoint: Sendable {
    /// With `accessoryKeyID`, the link ends unless the exchange reaches that key.
    case tcp(host: String, port: Int, accessoryKeyID: Data? = nil)
    /// A link already open, e.g. a GATT connection; the player closes it when done.
    case link(ChunkLink)
}

/// What a scenario needs from the accessory it plays against.
public protocol ScenarioEnvironment: Sendable {
    /// Where the accessory is now (a restart may move it); called once per link.
    func endpoint() async throws -> AccessoryEndpoint
    /// Stops the accessory and starts it again on the same state.
    func restartAccessory() async throws
    /// What the accessory shows now, to check the expectations against.
    func observe() async throws -> [ObservedNotification]
}

/// Plays a scenario's timeline as the simulated iPhone: one link at a time, calls made while
/// no link is up wait in the session, as iOS holds them, and go out on the next link.
public struct ScenarioPlayer: Sendable {
    public struct Report: Sendable, CustomStringConvertible {
        public var sent = 0
        public var acknowledged = 0
        /// Acknowledged as not stored: refused (too large, stale) or a duplicate. Not a failure
        /// by itself: a scenario that means a refusal says `absent`.
        public var notStored = 0
        public var alerted = 0
        public var links = 0
        /// Where the accessory's final state differs from the scenario's expectations.
        public var failures: [String] = []

        public var passed: Bool { failures.isEmpty && acknowledged == sent }
        public var description: String {
            "\(sent) calls forwarded over \(links) link(s), \(acknowledged) acknowledged"
                + (notStored > 0 ? " (\(notStored) not stored)" : "") + ", \(alerted) alerted; "
                + (failures.isEmpty ? "expectations hold" : "\(failures.count) expectation(s) failed")
        }
    }

    public let scenario: Scenario
    public let environment: any ScenarioEnvironment
    /// Longest wait for the key exchange or for receipts.
    public var timeout: Duration = .seconds(15)
    private let say: @Sendable (String) -> Void
    private let onEvent: @Sendable (HostClientEvent) -> Void

    public init(scenario: Scenario, environment: any ScenarioEnvironment, say: @escaping @Sendable (String) -> Void = { _ in }, onEvent: @escaping @Sendable (HostClientEvent) -> Void = { _ in }) {
        self.scenario = scenario
        self.environment = environment
        self.say = say
        self.onEvent = onEvent
    }

    /// Where the timeline stands between links.
    private struct Progress: Sendable {
        var next = 0
        var focus = false
        var sent = 0
        var links = 0
    }

    public func play(session initial: HostSession) async throws -> Report {
        let receipts = Mutex<[UInt64: (stored: Bool, alerted: Bool)]>([:])
        var session = initial
        var progress = Progress()
        var linkUp = true
        while true {
            guard linkUp else {
                guard progress.next < scenario.steps.count else { break }
                linkUp = try await offline(&progress, session: &session)
                continue
            }
            progress.links += 1
            let (start, onEvent) = (progress, self.onEvent)
            let record: @Sendable (HostClientEvent) -> Void = { event in
                if case .receipt(let sequence, let stored, let alerted) = event { receipts.withLock { $0[sequence] = (stored, alerted) } }
                onEvent(event)
            }
            let body: @Sendable (HostClient) async throws -> LinkEnd = { connection in
                try await connection.waitUntilEstablished(timeout: timeout)
                return try await online(start, over: connection)
            }
            let (after, ended) = switch try await environment.endpoint() {
            case .tcp(let host, let port, let keyID):
                try await HostClient.connect(host: host, port: port, session: session, accessoryKeyID: keyID, onEvent: record, body)
            case .link(let link): try await HostClient.run(over: link, session: session, onEvent: record, body)
            }
            session = ended
            progress = after.progress
            if after.restart {
                say("restarting the accessory")
                try await environment.restartAccessory()
            } else if !after.reconnect {
                // A disconnect step, or the end of the timeline with everything acknowledged.
                guard progress.next < scenario.steps.count else { break }
                linkUp = false
            }
        }
        var report = Report(sent: progress.sent, links: progress.links)
        (report.acknowledged, report.notStored, report.alerted) = receipts.withLock { receipts in
            (receipts.count, receipts.values.filter { !$0.stored }.count, receipts.values.filter(\.alerted).count)
        }
        report.failures = scenario.expect.failures(in: try await environment.observe())
        return report
    }

    private struct LinkEnd: Sendable {
        var progress: Progress
        var restart = false
        var reconnect = false
    }

    /// Runs steps over one established link until one ends it, or the timeline ends.
    private func online(_ start: Progress, over connection: HostClient) async throws -> LinkEnd {
        var progress = start
        while progress.next < scenario.steps.count {
            let step = scenario.steps[progress.next]
            progress.next += 1
            switch step {
            case .operation(let spec):
                let operation = spec.operation(focus: progress.focus)
                let sequence = try connection.send(operation)
                progress.sent += 1
                say("sent \(operation.summaryLine) as #\(sequence)")
            case .focus(let on):
                progress.focus = on
                say("Focus \(on ? "on" : "off")")
            case .disconnect(let during):
                if let during {
                    let operation = during.operation(focus: progress.focus)
                    let sequence = try connection.sendFirstChunkOnly(operation)
                    progress.sent += 1
                    say("sent the first chunk of \(operation.summaryLine) (#\(sequence)), then dropped the link")
                } else {
                    say("dropped the link")
                }
                return LinkEnd(progress: progress)
            case .reconnect:
                say("reconnecting")
                return LinkEnd(progress: progress, reconnect: true)
            case .restartAccessory:
                return LinkEnd(progress: progress, restart: true)
            case .reorder(let specs):
                let sequences = try connection.sendReversed(specs.map { $0.operation(focus: progress.focus) })
                progress.sent += specs.count
                say("sent #\(sequences.map(String.init).joined(separator: ", #")) in reverse order")
            case .settle:
                try await settle(connection)
            case .wait(let seconds):
                try await Task.sleep(for: .seconds(seconds))
            }
        }
        try await settle(connection)
        return LinkEnd(progress: progress)
    }

    /// Steps while no link is up: calls wait in the session, as iOS holds them.
    private func offline(_ progress: inout Progress, session: inout HostSession) async throws -> Bool {
        let step = scenario.steps[progress.next]
        progress.next += 1
        switch step {
        case .operation(let spec):
            let operation = spec.operation(focus: progress.focus)
            let sequence = try session.send(operation, now: Date()).sequence
            progress.sent += 1
            say("no link: \(operation.summaryLine) waits as #\(sequence)")
        case .reorder(let specs):
            for spec in specs {
                _ = try session.send(spec.operation(focus: progress.focus), now: Date())
                progress.sent += 1
            }
            say("no link: \(specs.count) reordered calls wait in order")
        case .disconnect(let during):
            if let during {
                _ = try session.send(during.operation(focus: progress.focus), now: Date())
                progress.sent += 1
            }
        case .focus(let on):
            progress.focus = on
            say("Focus \(on ? "on" : "off")")
        case .reconnect:
            say("reconnecting")
            return true
        case .settle:
            // Settling needs a link: connect, then take this step again over it.
            progress.next -= 1
            say("reconnecting to settle")
            return true
        case .restartAccessory:
            say("restarting the accessory")
            try await environment.restartAccessory()
            return true
        case .wait(let seconds):
            try await Task.sleep(for: .seconds(seconds))
        }
        // The timeline ended with the link down: connect once more to deliver what waits.
        return progress.next >= scenario.steps.count && session.outstandingCount > 0
    }

    private func settle(_ connection: HostClient) async throws {
        let outstanding = connection.unacknowledged
        guard !outstanding.isEmpty else { return }
        _ = try await connection.waitForReceipts(outstanding, timeout: timeout)
    }
}
