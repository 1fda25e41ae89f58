import Foundation
import NotifBridgeWire

/// A notification as the accessory keeps and shows it.
public struct StoredNotification: Sendable, Hashable {
    public var sourceIdentifier: String
    public var notificationIdentifier: String
    public var notification: WireNotification
    public var alerting: WireAlertingContext?
    public var alerted: Bool
    public var removed: Bool
    public var revision: Revision
    public var receivedAt: Date
    public var updatedAt: Date
    /// What the alert policy decided when the notification arrived.
    public var alertDecision: AlertDecision?

    public init(
        notification: WireNotification,
        alerting: WireAlertingContext?,
        alerted: Bool,
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
        self.alerted = alerted
        self.removed = removed
        self.revision = revision
        self.receivedAt = receivedAt
        self.updatedAt = updatedAt
        self.alertDecision = alertDecision
    }
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

/// What the store did with one event; the receipt reports `stored` and `alerted`.
public struct ApplyOutcome: Sendable, Hashable {
    public var decision: LedgerDecision
    /// The event changed the store.
    public var stored: Bool
    /// The accessory alerts for this notification now (only ever for a first add).
    public var alerted: Bool
    /// The record after the event, if there is one.
    public var record: StoredNotification?
    /// Records marked removed by a remove-all.
    public var removedCount: Int

    public init(decision: LedgerDecision, stored: Bool, alerted: Bool, record: StoredNotification?, removedCount: Int = 0) {
        self.decision = decision
        self.stored = stored
        self.alerted = alerted
        self.record = record
        self.removedCount = removedCount
    }
}
