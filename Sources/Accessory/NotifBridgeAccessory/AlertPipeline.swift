import Foundation
import Logging
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// Something outside the daemon that hears about alerts: a user hook, a desktop notification.
/// It must return at once; the pipeline never waits for it.
public protocol AlertSink: Sendable {
    func alert(_ event: AlertEvent)
    /// Ends what the sink still runs, once the daemon has stopped (hooks, for one).
    func stop() async
}

extension AlertSink {
    public func stop() async {}
}

/// Sinks act on the planner's decision (``AlertPlan``) as it is; none decides again whether
/// to alert.
public enum AlertEvent: Sendable {
    /// A new notification and the planner's decision for it (alerting or not).
    case notification(StoredNotification, AlertDecision)
    /// A notification already shown changed (`.updated`) or is gone from the iPhone
    /// (`.removed`): a sink that shows notifications follows it; none alerts for it.
    case changed(StoredNotification, PresenterEvent.Change)
    /// The iPhone cleared everything (remove-all).
    case removedAll
    /// Held-back notifications of a burst, announced once.
    case burstSummary(count: Int)
}

/// From decrypted events to what the user sees: each batch is planned (``AlertPlanner``) and
/// stored in one fsynced transaction, then shown and handed to the sinks, and the burst
/// limiter's held-back notifications are summarised when its window has room again.
final class AlertPipeline: Sendable {
    let store: AccessoryStore
    let settings: AlertSettings
    let presenter: any Presenter
    let sinks: [any AlertSink]
    let logger: Logger
    let gate: LogGate
    let minuteOfDay: @Sendable () -> Int
    /// A commit holds the limiter across its store write (plan, write, then advance, with no
    /// other commit in between), and nothing else waits on that. Lock order: this, then the
    /// store's writer; nothing inside a write takes a lock here.
    private let burst: Mutex<BurstLimiter>

    init(
        store: AccessoryStore, policy: PolicyFile, presenter: any Presenter, sinks: [any AlertSink], logger: Logger, gate: LogGate,
        minuteOfDay: @escaping @Sendable () -> Int
    ) {
        self.store = store
        settings = policy.alerts
        self.presenter = presenter
        self.sinks = sinks
        self.logger = logger
        self.gate = gate
        self.minuteOfDay = minuteOfDay
        burst = Mutex(BurstLimiter(limit: policy.burst))
    }

    /// Stores `batch` in one transaction, each event as the planner planned it (so receipts and
    /// stored decisions always agree), then shows what changed. The results are in `batch`'s
    /// order; a failed commit fails every event of the batch.
    /// - Parameter opened: for events that came over the internet, what opening them changed in
    ///   the receiving ratchet, saved in the same transaction (all or nothing).
    func commit(_ batch: [AccessorySession.Delivery], opened: [(exchangeID: UInt64, changes: ReceivingRatchet.Changes)] = []) -> [Result<ApplyOutcome, any Error>] {
        guard !batch.isEmpty || !opened.isEmpty else { return [] }
        let minute = minuteOfDay()
        let results: [Result<ApplyOutcome, any Error>]
        do {
            results = try burst.withLock { burst in
                let conditions = AlertConditions(settings: settings, minuteOfDay: minute, now: .now)
                return try store.applyBatch(batch.map { ($0.event, $0.exchangeID) }, opened: opened, now: Date(), conditions: conditions, burst: &burst)
            }
        } catch {
            results = batch.map { _ in .failure(error) }
        }
        var shown: [PresenterEvent] = []
        var failed: [(sequence: UInt64, error: any Error)] = []
        for (delivery, result) in zip(batch, results) {
            switch result {
            case .success(let outcome): show(delivery.event, outcome, into: &shown)
            case .failure(let error): failed.append((delivery.event.sequence, error))
            }
        }
        if let first = failed.first {
            gate.pass(store.path, .storeFailures) { logger.error("\(Self.failureLine(failed.map(\.sequence), first.error))") }
        }
        presenter.present(shown)
        return results
    }

    /// One line for a batch's failures (a failed commit fails all of its events alike): the
    /// first few sequence numbers, how many, and the first reason.
    static func failureLine(_ sequences: [UInt64], _ error: any Error) -> String {
        let shown = sequences.prefix(5).map { "#\($0)" }.joined(separator: ", ")
        let events = sequences.count == 1 ? "event \(shown)" : "\(sequences.count) events (\(shown)\(sequences.count > 5 ? ", …" : ""))"
        return "could not store \(events): \(error)"
    }

    /// Logs an applied event, collects what the presenter shows for it and alerts the sinks.
    private func show(_ event: HostEvent, _ outcome: ApplyOutcome, into shown: inout [PresenterEvent]) {
        logger.info("applied \(event.kindName) #\(event.sequence): \(outcome.ledger)\(outcome.alerted ? ", alerting" : "")\(outcome.plan.decision.map { " (\($0.reason))" } ?? "")")
        if let record = outcome.record {
            logger.debug("notification content", metadata: ["title": "\(record.notification.title)", "body": "\(record.notification.body.plainText)"])
        }
        switch (event.event, outcome.ledger) {
        case (.removeAll, .markRemoved):
            shown.append(.removedAll(count: outcome.removedCount))
            for sink in sinks { sink.alert(.removedAll) }
        case (_, .ignore(let reason)):
            if let id = event.notificationID {
                shown.append(.ignored(source: id.sourceIdentifier, id: id.notificationIdentifier, reason: reason.rawValue))
            }
        case (.add, .insert), (.update, .insert):
            guard let record = outcome.record else { return }
            shown.append(.notification(record, change: .added))
            if let decision = outcome.plan.decision {
                for sink in sinks { sink.alert(.notification(record, decision)) }
            }
        case (_, .replace), (_, .markRemoved):
            guard let record = outcome.record else { return }
            let change: PresenterEvent.Change = outcome.ledger == .replace ? .updated : .removed
            shown.append(.notification(record, change: change))
            for sink in sinks { sink.alert(.changed(record, change)) }
        default: break
        }
    }

    /// Announces held-back notifications once the burst window has room again.
    func summarise(now: ContinuousClock.Instant = .now) {
        let summary = burst.withLock { burst in
            let summary = AlertPlanner.summary(burst: burst, now: now)
            if let summary { burst.advance(summary.burst) }
            return summary
        }
        guard let count = summary?.count else { return }
        logger.notice("burst summary: \(count) notification(s) arrived without alerting")
        presenter.present(.burstSummary(count: count))
        for sink in sinks { sink.alert(.burstSummary(count: count)) }
    }
}

extension HostEvent {
    /// The event's kind for logs.
    var kindName: String {
        switch event {
        case .add: "add"
        case .update: "update"
        case .remove: "remove"
        case .removeAll: "remove-all"
        case nil: "empty"
        }
    }
}
