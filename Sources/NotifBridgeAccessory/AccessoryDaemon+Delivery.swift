import Foundation
import Logging
import Synchronization
import NIOCore
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeStore
import NotifBridgeWire

/// Something outside the daemon that hears about alerts: a user hook, a desktop notification.
/// It must return at once; the pipeline never waits for it.
public protocol AlertSink: Sendable {
    func alert(_ event: AlertEvent)
}

public enum AlertEvent: Sendable {
    /// A new notification and what the policy decided for it (alerting or not).
    case notification(StoredNotification, AlertDecision)
    /// Held-back notifications of a burst, announced once.
    case burstSummary(count: Int)
}

extension AccessoryDaemon {
    enum Outcome { case keepOpen, close }

    /// Carries out actions in order; a delivery's receipt is sent after the store has it.
    func perform(
        _ actions: [AccessoryConnection.Action],
        on connection: inout AccessoryConnection,
        outbound: NIOAsyncChannelOutboundWriter<[UInt8]>
    ) async throws -> Outcome {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .transmit(let chunks, let kind):
                logger.debug("sending \(kind) in \(chunks.count) chunk(s)")
                try await outbound.write(contentsOf: chunks)
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
                logger.notice("rotated to a fresh \(key.suite.rawValue) key \(hex(key.keyID)) after a decrypt failure")
                presenter.present(.resync(reason: "a message did not decrypt"))
            case .deliver(let delivery):
                do {
                    let outcome = try apply(delivery.event, exchangeID: delivery.exchangeID)
                    show(delivery.event, outcome)
                    queue.append(contentsOf: connection.delivered(delivery, stored: outcome.stored, alerted: outcome.alerted))
                } catch {
                    logger.error("could not store event #\(delivery.event.sequence): \(error)")
                    queue.append(contentsOf: connection.deliveryFailed("\(error)"))
                }
            case .refused(let error):
                logger.warning("refused input from host: \(error)")
                presenter.present(.refused(detail: error.description))
            case .close(let reason):
                logger.notice("closing connection: \(reason)")
                return .close
            }
        }
        return .keepOpen
    }

    /// Stores one event, deciding alerts with the policy and the burst limit in the same
    /// transaction, so the receipt and the stored decision always agree.
    private func apply(_ event: HostEvent, exchangeID: UInt64) throws -> ApplyOutcome {
        let minute = minuteOfDay()
        let settings = policy.alerts
        return try store.apply(
            event,
            exchangeID: exchangeID,
            now: Date(),
            policy: { AlertPolicy.decide(AlertInput($0, minuteOfDay: minute), settings: settings) },
            admit: { state.withLock { $0.limiter.admit(now: .now) } }
        )
    }

    private func show(_ event: HostEvent, _ outcome: ApplyOutcome) {
        let kind: String = switch event.event {
        case .add: "add"
        case .update: "update"
        case .remove: "remove"
        case .removeAll: "remove-all"
        case nil: "empty"
        }
        let reason = outcome.record?.alertDecision.map { " (\($0.reason))" } ?? ""
        logger.info("applied \(kind) #\(event.sequence): \(outcome.decision)\(outcome.alerted ? ", alerting" : "")\(reason)")
        if let record = outcome.record {
            logger.debug("notification content", metadata: ["title": "\(record.notification.title)", "body": "\(record.notification.body.plainText)"])
        }
        switch (event.event, outcome.decision) {
        case (.removeAll, .markRemoved): presenter.present(.removedAll(count: outcome.removedCount))
        case (_, .ignore(let reason)):
            if let id = event.notificationID {
                presenter.present(.ignored(source: id.sourceIdentifier, id: id.notificationIdentifier, reason: reason.rawValue))
            }
        case (.add, .insert), (.update, .insert):
            guard let record = outcome.record else { return }
            presenter.present(.notification(record, change: .added))
            if let decision = record.alertDecision {
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
            guard let count = state.withLock({ $0.limiter.summaryDue(now: .now) }) else { continue }
            logger.notice("burst summary: \(count) notification(s) arrived without alerting")
            presenter.present(.burstSummary(count: count))
            for sink in sinks { sink.alert(.burstSummary(count: count)) }
        }
    }
}
