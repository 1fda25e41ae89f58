#if canImport(NotifBridgeBLE)
import Foundation
import Logging
import NotifBridgeANCS
import NotifBridgeBLE
import NotifBridgeCrypto
import NotifBridgeScenario
import Synchronization

/// Plays an ``ANCSScenario`` as the iPhone: the ANCS server model (``ANCSServer``) behind a
/// BlueZ GATT server. Prints one line per thing a test checks: subscriptions in the order they
/// came, Control Point requests, actions asked for, disconnects.
final class ANCSPlayer: Sendable {
    struct Timing: Sendable {
        var connect: Duration
        var subscribe: Duration
        var action: Duration
        var settle: Duration
    }

    private struct State: Sendable {
        var model = ANCSServer()
        var connected = false
        /// The next Data Source reply is cut in half and the link dropped.
        var cutArmed = false
        var cutDone = false
        var lastRequest = ContinuousClock.now
        var performed: [(uid: UInt32, action: ANCSActionID)] = []
    }

    let scenario: ANCSScenario
    let timing: Timing
    let printer: PhonePrinter
    private let state = Mutex(State())
    private let server = Mutex<ANCSGATTServer?>(nil)

    /// How often waits look at the state again.
    static let poll = Duration.milliseconds(100)

    init(scenario: ANCSScenario, timing: Timing, printer: PhonePrinter) {
        self.scenario = scenario
        self.timing = timing
        self.printer = printer
        state.withLock { $0.model.appNames = scenario.apps }
    }

    func play(adapter: String, logger: Logger) async throws {
        let server = try await ANCSGATTServer.start(adapter: adapter, logger: logger) { [weak self] bytes in
            await self?.controlPoint(bytes) ?? .rejected(attError: 0xA3)
        }
        self.server.withLock { $0 = server }
        let watcher = Task {
            for await (characteristic, subscribed) in server.subscriptions {
                let name = characteristic == .dataSource ? "data-source" : "notification-source"
                printer.line("\(subscribed ? "subscribed" : "unsubscribed") \(name)")
            }
        }
        defer { watcher.cancel() }
        try await connect(server)
        for step in scenario.steps {
            try await perform(step, server)
        }
        try await wait(upTo: timing.action + timing.settle, "the accessory to finish its requests") {
            ContinuousClock.now - $0.lastRequest >= timing.settle
        }
        await server.disconnect()
        await server.stop()
        printer.line("done")
    }

    private func perform(_ step: ANCSScenario.Step, _ server: ANCSGATTServer) async throws {
        switch step {
        case .post(let notification, let preExisting):
            let (bytes, connected) = state.withLock { ($0.model.post(notification, preExisting: preExisting), $0.connected) }
            if connected { try await server.notify(.notificationSource, bytes) }
            if state.withLock({ $0.cutArmed }) {
                try await wait(upTo: timing.action, "a Data Source reply to cut off") { $0.cutDone }
            }
        case .remove(let uid):
            let (bytes, connected) = state.withLock { ($0.model.remove(uid: uid), $0.connected) }
            if connected, let bytes { try await server.notify(.notificationSource, bytes) }
        case .wait(let duration):
            try await Task.sleep(for: duration)
        case .disconnect(duringReply: true):
            state.withLock {
                $0.cutArmed = true
                $0.cutDone = false
            }
        case .disconnect(duringReply: false):
            await disconnect(server)
            printer.line("disconnected")
        case .reconnect:
            try await connect(server)
            for bytes in state.withLock({ $0.model.announceAll() }) {
                try await server.notify(.notificationSource, bytes)
            }
        case .expectAction(let uid, let action):
            printer.line("waiting for \(action == .positive ? "positive" : "negative") action on \(uid)")
            try await wait(upTo: timing.action, "the accessory to ask for that action") { state in
                state.performed.contains { $0.uid == uid && $0.action == action }
            }
        }
    }

    private func connect(_ server: ANCSGATTServer) async throws {
        try await server.connectAndAwaitSubscriptions(timeout: timing.connect + timing.subscribe)
        state.withLock { $0.connected = true }
        printer.line("connected")
    }

    private func disconnect(_ server: ANCSGATTServer) async {
        state.withLock {
            $0.connected = false
        }
        await server.disconnect()
    }

    /// Answers a Control Point request from the model; its Data Source reply goes out after
    /// the write is answered.
    private func controlPoint(_ bytes: [UInt8]) async -> ANCSGATTServer.ControlPointAnswer {
        printer.line("control-point \(hexString(bytes))")
        let (reply, cut) = state.withLock { state in
            state.lastRequest = .now
            let reply = state.model.handleControlPoint(bytes)
            guard case .dataSource = reply, state.cutArmed else { return (reply, false) }
            state.cutArmed = false
            return (reply, true)
        }
        switch reply {
        case .dataSource(let bytes):
            Task { await self.reply(bytes, cut: cut) }
            return .accepted
        case .performed(let uid, let action):
            printer.line("performed \(action == .positive ? "positive" : "negative") action on \(uid)")
            state.withLock { $0.performed.append((uid, action)) }
            return .accepted
        case .error(let error):
            printer.line("control-point refused: \(error)")
            return .rejected(attError: error.attErrorCode ?? 0xA1)
        }
    }

    private func reply(_ bytes: [UInt8], cut: Bool) async {
        guard let server = server.withLock({ $0 }) else { return }
        do {
            if cut {
                let half = Array(bytes.prefix(max(1, bytes.count / 2)))
                try await server.notify(.dataSource, half)
                await disconnect(server)
                printer.line("disconnected in the middle of a Data Source reply (\(half.count) of \(bytes.count) bytes sent)")
                state.withLock { $0.cutDone = true }
            } else {
                try await server.notify(.dataSource, bytes)
            }
        } catch {
            printer.line("data source: \(error)")
        }
    }

    private func wait(upTo limit: Duration, _ what: String, until done: (State) -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !state.withLock({ done($0) }) {
            guard ContinuousClock.now < deadline else { throw CommandFailure("gave up after \(limit) waiting for \(what)") }
            try await Task.sleep(for: Self.poll)
        }
    }
}
#endif
