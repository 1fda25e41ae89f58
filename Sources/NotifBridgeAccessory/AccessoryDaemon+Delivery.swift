import Foundation
import Logging
import Synchronization
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeStore
import NotifBridgeWire

/// Something outside the daemon that hears about alerts: a user hook, a desktop notification.
/// It must return at once; the pipeline never waits for it.
public protocol AlertSink: Sendable {
    func alert(_ event: AlertEvent)
}

/// Sinks act on the planner's decision (``AlertPlan``) as it is; none decides again whether
/// to alert.
public enum AlertEvent: Sendable {
    /// A new notification and the planner's decision for it (alerting or not).
    case notification(StoredNotification, AlertDecision)
    /// Held-back notifications of a burst, announced once.
    case burstSummary(count: Int)
}

extension AccessoryDaemon {
    enum Outcome { case keepOpen, close }

    /// Carries out actions in order. Deliveries are collected for `commit`, which stores them
    /// together and only then sends their receipts.
    func perform(
        _ actions: [AccessoryConnection.Action],
        on connection: inout AccessoryConnection,
        link: ChunkLink,
        deliveries: inout [AccessorySession.Delivery]
    ) async throws -> Outcome {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .transmit(let chunks, let kind):
                logger.debug("sending \(kind) in \(chunks.count) chunk(s)")
                try await link.write(chunks)
            case .persistExchange(let parameters):
                let keyID = state.withLock { state in
                    state.exchange = parameters
                    return state.identity.keyID
                }
                try store.saveExchange(parameters, keyID: keyID, now: Date())
                presenter.present(.keyExchange(suite: parameters.cipherSuite, exchangeID: parameters.exchangeID, resumed: false))
                logger.info("key exchange \(exchangeHex(parameters.exchangeID)) completed (\(parameters.cipherSuite))")
            case .resumedExchange(let exchangeID):
                presenter.present(.keyExchange(suite: configuration.suite.rawValue, exchangeID: exchangeID, resumed: true))
                logger.info("host resumed key exchange \(exchangeHex(exchangeID))")
            case .forgetExchange(let exchangeID):
                state.withLock { if $0.exchange?.exchangeID == exchangeID { $0.exchange = nil } }
                try store.forgetExchange(exchangeID)
            case .replaceIdentity(let key):
                try keyFile.save(key)
                state.withLock { $0.identity = key }
                logger.notice("rotated to a fresh \(key.suite.rawValue) key \(hexString(key.keyID)) after a decrypt failure")
                presenter.present(.resync(reason: "a message did not decrypt"))
            case .deliver(let delivery):
                deliveries.append(delivery)
            case .refused(let error):
                throttled(link.origin) {
                    logger.warning("refused input from \(link.peer): \(error)")
                    presenter.present(.refused(detail: error.description))
                }
            case .close(let reason):
                throttled(link.origin) { logger.notice("closing the connection from \(link.peer): \(reason)") }
                return .close
            }
        }
        return .keepOpen
    }

    /// Stores the collected deliveries in one transaction, each as ``AlertPlanner`` planned it
    /// (so receipts and stored decisions always agree), then sends their receipts.
    func commit(
        _ deliveries: inout [AccessorySession.Delivery],
        on connection: inout AccessoryConnection,
        link: ChunkLink
    ) async throws {
        guard !deliveries.isEmpty else { return }
        let batch = deliveries
        deliveries.removeAll()
        let minute = minuteOfDay()
        let results: [Result<ApplyOutcome, any Error>]
        do {
            results = try burst.withLock { burst in
                let conditions = AlertConditions(settings: policy.alerts, minuteOfDay: minute, now: .now)
                return try store.applyBatch(batch.map { ($0.event, $0.exchangeID) }, now: Date(), conditions: conditions, burst: &burst)
            }
        } catch {
            results = batch.map { _ in .failure(error) }
        }
        var replies: [AccessoryConnection.Action] = []
        for (delivery, result) in zip(batch, results) {
            switch result {
            case .success(let outcome):
                show(delivery.event, outcome)
                replies += connection.delivered(delivery, stored: outcome.stored, alerted: outcome.alerted)
            case .failure(let error):
                logger.error("could not store event #\(delivery.event.sequence): \(error)")
                replies += connection.deliveryFailed("\(error)")
            }
        }
        var none: [AccessorySession.Delivery] = []
        _ = try await perform(replies, on: &connection, link: link, deliveries: &none)
    }

    private func show(_ event: HostEvent, _ outcome: ApplyOutcome) {
        let kind: String = switch event.event {
        case .add: "add"
        case .update: "update"
        case .remove: "remove"
        case .removeAll: "remove-all"
        case nil: "empty"
        }
        let reason = outcome.plan.decision.map { " (\($0.reason))" } ?? ""
        logger.info("applied \(kind) #\(event.sequence): \(outcome.ledger)\(outcome.alerted ? ", alerting" : "")\(reason)")
        if let record = outcome.record {
            logger.debug("notification content", metadata: ["title": "\(record.notification.title)", "body": "\(record.notification.body.plainText)"])
        }
        switch (event.event, outcome.ledger) {
        case (.removeAll, .markRemoved): presenter.present(.removedAll(count: outcome.removedCount))
        case (_, .ignore(let reason)):
            if let id = event.notificationID {
                presenter.present(.ignored(source: id.sourceIdentifier, id: id.notificationIdentifier, reason: reason.rawValue))
            }
        case (.add, .insert), (.update, .insert):
            guard let record = outcome.record else { return }
            presenter.present(.notification(record, change: .added))
            if let decision = outcome.plan.decision {
                for sink in sinks { sink.alert(.notification(record, decision)) }
            }
        case (_, .replace): outcome.record.map { presenter.present(.notification($0, change: .updated)) }
        case (_, .markRemoved): outcome.record.map { presenter.present(.notification($0, change: .removed)) }
        default: break
        }
    }

    /// Announces held-back notifications once the burst window has room again.
    func runSummaryTicker() async throws {
        while true {
            try await Task.sleep(for: .milliseconds(500))
            for summary in state.withLock({ $0.logThrottle.summaries(now: .now) }) {
                logger.notice("\(summary.suppressed) more \(summary.origin) in the last \(configuration.resources.logInterval) were not logged")
            }
            let summary = burst.withLock { burst in
                let summary = AlertPlanner.summary(burst: burst, now: .now)
                if let summary { burst.advance(summary.burst) }
                return summary
            }
            guard let count = summary?.count else { continue }
            logger.notice("burst summary: \(count) notification(s) arrived without alerting")
            presenter.present(.burstSummary(count: count))
            for sink in sinks { sink.alert(.burstSummary(count: count)) }
        }
    }
}
