import Foundation
import NotifBridgeWire

/// A notification as the accessory keeps and shows it.
public struct StoredNotification: Sendable, Hashable {
    public var sourceIdentifier: String
    public var notificationIdentifier: String
    public var notification: WireNotification
    public var alerting: WireAlertingContext?
    public var removed: Bool
    public var revision: Revision
    public var receivedAt: Date
    public var updatedAt: Date
    /// What the planner decided when the notification was posted; nil for a record an update
    /// or a removal created.
    public var alertDecision: AlertDecision?

    public init(
        notification: WireNotification,
        alerting: WireAlertingContext?,
        removed: Bool,
        revision: Revision,
        receivedAt: Date,
        updatedAt: Date,
        alertDecision: AlertDecision? = nil
    ) {
        self.sourceIdentifier = notification.id.sourceIdentifier
        self.notificationIdentifier = notification.id.notificationIdentifier
        self.notification = notification
        self.alerting = alerting
        self.removed = removed
        self.revision = revision
        self.receivedAt = receivedAt
        self.updatedAt = updatedAt
        self.alertDecision = alertDecision
    }

    /// Whether the accessory alerted for it: read from the decision, never stored apart from it.
    public var alerted: Bool { alertDecision?.alerts ?? false }
}

extension Notifbridge_V1_RichText {
    /// The text with each image glyph replaced by its description in brackets, for screens and
    /// presenters that cannot draw glyph images.
    public var plainText: String {
        runs.map { run in
            switch run.run {
            case .text(let text): text
            case .glyph(let glyph): "[\(glyph.contentDescription.isEmpty ? "image" : glyph.contentDescription)]"
            case nil: ""
            }
        }.joined()
    }
}

/// What the store did with one event: the plan it carried out, and the record afterwards.
public struct ApplyOutcome: Sendable, Hashable {
    public var plan: AlertPlan
    /// The record after the event, if there is one.
    public var record: StoredNotification?
    /// Records marked removed by a remove-all.
    public var removedCount: Int

    public init(plan: AlertPlan, record: StoredNotification?, removedCount: Int = 0) {
        self.plan = plan
        self.record = record
        self.removedCount = removedCount
    }

    public var ledger: LedgerDecision { plan.ledger }
    /// The event changed the store: the receipt's `stored`.
    public var stored: Bool { plan.stores }
    /// The accessory alerts for this notification now (only ever for a new posting): the
    /// receipt's `alerted`.
    public var alerted: Bool { plan.alerts }
}
