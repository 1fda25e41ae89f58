import Foundation
import Logging
import NotifBridgeANCS
import NotifBridgeAccessoryCore
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// Where ANCS bytes come from and Control Point requests go: the BlueZ GATT client on Linux.
/// The daemon stays free of any Bluetooth stack.
public protocol ANCSPort: Sendable {
    var events: AsyncStream<ANCSPortEvent> { get }
    func writeControlPoint(_ bytes: [UInt8], device: String) async throws
}

public enum ANCSPortEvent: Sendable, Equatable {
    /// The device's Data Source and Notification Source are subscribed, in that order.
    case ready(device: String)
    case notificationSource(device: String, [UInt8])
    case dataSource(device: String, [UInt8])
    case gone(device: String)
}

/// Carries out an ``ANCSFeed``: stores what it delivers through the alert pipeline (so ANCS
/// notifications are planned, stored, shown and alerted exactly like AccessoryNotifications
/// ones), withdraws what it withdraws, and writes its Control Point requests.
final class ANCSRunner: Sendable {
    let store: AccessoryStore
    let pipeline: AlertPipeline
    let registry: ConnectionRegistry
    let presenter: any Presenter
    let logger: Logger
    /// Rations what an iPhone's ANCS makes the daemon log: a peer sending garbage in a loop
    /// gets a share of lines and then a count, like a link's refusals.
    let gate: LogGate
    /// Made when `run` starts, so that an accessory that never serves ANCS never reads its time
    /// zone: Foundation maps ICU's time zone code for that, 2 MB of the daemon's resident memory.
    private let feed = Mutex<ANCSFeed?>(nil)

    static let tickInterval = Duration.seconds(1)

    init(store: AccessoryStore, pipeline: AlertPipeline, registry: ConnectionRegistry, presenter: any Presenter, logger: Logger, gate: LogGate) {
        self.gate = gate
        self.store = store
        self.pipeline = pipeline
        self.registry = registry
        self.presenter = presenter
        self.logger = logger
    }

    /// What the runner's one loop takes, in turn: port events, ticks and `respond` requests.
    /// One loop, so that the feed's actions are carried out in the order it produced them.
    private enum Input: Sendable {
        case port(ANCSPortEvent)
        /// The tick waiting in `pendingTick`, in its place among the inputs.
        case tick
        case perform(ANCSActionID, identifier: String, UUID)
    }

    private typealias Performed = CheckedContinuation<Result<Void, ANCSFeedError>, Never>

    /// The loop's input, while it runs, and the `respond` requests waiting for it: any still
    /// waiting when the loop ends (shutdown, the port gone) hear that nothing was sent.
    private struct Inbox {
        var continuation: AsyncStream<Input>.Continuation?
        var waiting: [UUID: Performed] = [:]
    }

    /// Inputs waiting for the loop. Port events past this are dropped (and logged), as the
    /// BlueZ client drops its oldest: an iPhone cannot grow the daemon's memory.
    static let maxQueuedInputs = 1024

    private let inbox = Mutex(Inbox())
    /// The tick the loop has not yet taken. The feed judges the iPhone's deadlines as of when it
    /// was made, so that a tick made after a reply arrived but taken after a slow commit, behind
    /// that reply, does not drop it. One at a time: a loop that fell behind gets no backlog of
    /// stale ticks. One the full queue refused (`queued` false) is taken after the loop's next
    /// input instead: a flood of port events must not stop the ticks.
    private let pendingTick = Mutex<PendingTick?>(nil)

    private struct PendingTick: Sendable {
        var made: ContinuousClock.Instant
        var queued = true
    }

    /// Serves the port's events, with a tick for reply timeouts, catch-up and the
    /// AccessoryNotifications rule, until the events end or the task is cancelled.
    func run(_ port: any ANCSPort) async {
        // The default configuration reads the local time zone: here, not before.
        feed.withLock { feed in
            if feed == nil { feed = ANCSFeed(configuration: ANCSFeed.Configuration()) }
        }
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingOldest(Self.maxQueuedInputs))
        pendingTick.withLock { $0 = nil }
        inbox.withLock { $0.continuation = continuation }
        defer {
            let waiting = inbox.withLock { inbox in
                inbox.continuation = nil
                defer { inbox.waiting.removeAll() }
                return inbox.waiting.values
            }
            for done in waiting { done.resume(returning: .failure(.notConnected)) }
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in port.events {
                    if case .dropped = continuation.yield(.port(event)) {
                        self.gate.pass("ANCS") { self.logger.warning("ANCS input queue full: an event from the iPhone was dropped") }
                    }
                }
                continuation.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.tickInterval)
                    let made = self.pendingTick.withLock { slot in
                        guard slot == nil else { return false }
                        slot = PendingTick(made: .now)
                        return true
                    }
                    if made, case .dropped = continuation.yield(.tick) {
                        self.pendingTick.withLock { $0?.queued = false }
                    }
                }
            }
            for await input in inputs {
                switch input {
                case .port(let event):
                    await handle(event, port: port)
                case .tick:
                    await tick(taking: { _ in true }, port: port)
                case .perform(let action, let identifier, let id):
                    let result: Result<Void, ANCSFeedError>
                    switch withFeed({ $0.perform(action, identifier: identifier, now: .now, date: Date()) }) {
                    case .failure(let error):
                        result = .failure(error)
                    case .success(let actions):
                        await carryOut(actions, port: port)
                        result = .success(())
                    }
                    inbox.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: result)
                }
                await tick(taking: { !$0.queued }, port: port)
            }
            group.cancelAll()
        }
    }

    /// Runs the pending tick, if there is one and `which` takes it.
    private func tick(taking which: (PendingTick) -> Bool, port: any ANCSPort) async {
        let pending = pendingTick.withLock { slot -> PendingTick? in
            guard let tick = slot, which(tick) else { return nil }
            slot = nil
            return tick
        }
        guard let made = pending?.made else { return }
        let established = registry.newestEstablished() != nil
        await carryOut(withFeed { $0.tick(now: .now, made: made, date: Date(), otherSourceEstablished: established) }, port: port)
    }

    /// The feed, which `run` has made: nothing reaches it but `run`'s loop.
    private func withFeed<T>(_ body: (inout ANCSFeed) -> T) -> T {
        feed.withLock { feed in
            precondition(feed != nil, "the ANCS feed is used only while run runs")
            return body(&feed!)
        }
    }

    private func handle(_ event: ANCSPortEvent, port: any ANCSPort) async {
        let actions: [ANCSFeed.Action]
        switch event {
        case .ready(let device):
            let exchangeID = UInt64.random(in: 1...UInt64.max)
            // Already serving a device (this one again, or another): the feed says which, and
            // no epoch is recorded for a connection it will not use.
            if withFeed({ $0.device != nil }) {
                actions = withFeed { $0.connected(device, exchangeID: exchangeID, now: .now) }
                break
            }
            do {
                try store.beginANCSConnection(device: device, exchangeID: exchangeID, now: Date())
            } catch {
                logger.error("cannot record the ANCS connection from \(device): \(error)")
                return
            }
            actions = withFeed { $0.connected(device, exchangeID: exchangeID, now: .now) }
            gate.pass("ANCS", .connections) { presenter.present(.connected(peer: "\(device) (ANCS)")) }
        case .notificationSource(let device, let bytes):
            actions = withFeed { $0.receivedNotificationSource(bytes, from: device, now: .now, date: Date()) }
        case .dataSource(let device, let bytes):
            actions = withFeed { $0.receivedDataSource(bytes, from: device, now: .now, date: Date()) }
        case .gone(let device):
            actions = withFeed { $0.disconnected(device) }
            if !actions.isEmpty { gate.pass("ANCS", .connections) { presenter.present(.disconnected(peer: "\(device) (ANCS)")) } }
        }
        await carryOut(actions, port: port)
    }

    /// Asks the iPhone to perform a stored ANCS notification's positive or negative action,
    /// in turn with everything else the loop does; returns once the request is written.
    func perform(_ action: ANCSActionID, identifier: String) async -> Result<Void, ANCSFeedError> {
        await withCheckedContinuation { (done: Performed) in
            let id = UUID()
            let queued = inbox.withLock { inbox in
                guard let continuation = inbox.continuation else { return false }
                inbox.waiting[id] = done
                guard case .enqueued = continuation.yield(.perform(action, identifier: identifier, id)) else {
                    inbox.waiting[id] = nil
                    return false
                }
                return true
            }
            if !queued { done.resume(returning: .failure(.notConnected)) }
        }
    }

    private func carryOut(_ actions: [ANCSFeed.Action], port: any ANCSPort) async {
        for action in actions {
            switch action {
            case .writeControlPoint(let device, let bytes):
                do {
                    try await port.writeControlPoint(bytes, device: device)
                } catch {
                    let next = withFeed { $0.controlPointWriteFailed("\(error)", device: device, now: .now, date: Date()) }
                    await carryOut(next, port: port)
                }
            case .deliver(let events, let exchangeID):
                let batch = events.map { AccessorySession.Delivery(event: $0, exchangeID: exchangeID, featureID: "ANCS") }
                // The pipeline logs failures, rationed.
                _ = pipeline.commit(batch)
            case .withdraw(let keeping):
                do {
                    let withdrawn = try store.withdraw(identifierPrefix: ANCSMapping.identifierPrefix, keeping: keeping, now: Date())
                    if !withdrawn.isEmpty {
                        logger.info("withdrew \(withdrawn.count) ANCS notification(s) the iPhone no longer has")
                        presenter.present(withdrawn.map { .notification($0, change: .removed) })
                    }
                } catch {
                    logger.error("could not withdraw ANCS notifications: \(error)")
                }
            case .log(let line):
                gate.pass("ANCS") { logger.info("\(line)") }
            }
        }
    }
}
