import Foundation
import NotifBridgeWire

/// The data-provider extension's logic (`AccessoryNotificationsHandler`), with no IO: it numbers
/// and serialises each call into the plaintext the system encrypts, keeps every event until the
/// accessory's receipt arrives, and turns decrypted accessory messages into receipts, responses
/// and removals.
///
/// Sequence numbers increase for the lifetime of the pairing and are never reused, across
/// reconnects and key exchanges alike: a re-sent event repeats its number, so the accessory's
/// ledger recognises it. The iOS adapter persists `nextSequence` (the extension process may be
/// ended at any time) and calls `serialize` from one serial queue, so a removal can never
/// overtake the update before it.
public struct NotificationsForwarder: Sendable {
    /// One serialised call, ready for `session.send(message:)`.
    public struct Outbound: Sendable, Hashable {
        public var sequence: UInt64
        /// A `HostEvent`, encoded: what the system encrypts.
        public var plaintext: Data
        /// An add, whose caller awaits the receipt to learn whether the accessory alerted.
        public var isAdd: Bool
    }

    public struct Receipt: Sendable, Hashable {
        public var sequence: UInt64
        public var stored: Bool
        public var alerted: Bool

        public init(sequence: UInt64, stored: Bool, alerted: Bool) {
            self.sequence = sequence
            self.stored = stored
            self.alerted = alerted
        }
    }

    public struct NotificationID: Sendable, Hashable {
        public var source: String
        public var id: String
    }

    /// What `messageHandler` learned from one accessory message.
    public enum Inbound: Sendable, Hashable {
        case receipt(Receipt)
        /// Hand to `session.sendResponse(_:)`.
        case response(NotificationResponse)
        /// Hand to `session.removeNotifications(identifiers:)`.
        case removeOnPhone([NotificationID])
    }

    public struct UnreadableMessage: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public private(set) var nextSequence: UInt64
    /// Sent and not yet acknowledged by a receipt, by sequence: a receipt, which may arrive in
    /// any order, costs O(1) however many events are in flight.
    private var pending: [UInt64: Outbound] = [:]

    /// Sent and not yet acknowledged, in sequence order (sorted on each call: for re-sending
    /// after a new link, not for every receipt).
    public var unacknowledged: [Outbound] {
        pending.values.sorted { $0.sequence < $1.sequence }
    }

    /// How many sent events wait for their receipt.
    public var unacknowledgedCount: Int { pending.count }

    /// The sent event with this number, if it still waits for its receipt.
    public func unacknowledged(_ sequence: UInt64) -> Outbound? {
        pending[sequence]
    }

    public init(nextSequence: UInt64 = 1) {
        self.nextSequence = max(nextSequence, 1)
    }

    /// Serialises one call under the next sequence number without using it up, so a call the
    /// system refuses (too large for the accessory) leaves no gap.
    public func serialize(_ operation: HostOperation, now: Date) throws(DataProvider.InvalidInput) -> Outbound {
        var event = HostEvent()
        event.sequence = nextSequence
        event.event = try DataProvider.event(for: operation, now: now)
        let isAdd = if case .add = operation { true } else { false }
        return Outbound(sequence: nextSequence, plaintext: Data(WireCodec.encode(event)), isAdd: isAdd)
    }

    /// Records a serialised call as sent: its number is used, and it is kept until its receipt.
    public mutating func sent(_ outbound: Outbound) {
        precondition(outbound.sequence == nextSequence, "events are committed in the order they were serialised")
        nextSequence += 1
        pending[outbound.sequence] = outbound
    }

    /// `messageHandler(_:)`: one decrypted accessory message.
    public mutating func messageHandler(_ plaintext: Data) throws(UnreadableMessage) -> Inbound? {
        let event: AccessoryEvent
        do {
            event = try WireCodec.decode(AccessoryEvent.self, from: plaintext)
        } catch {
            throw UnreadableMessage(description: "accessory message is not an AccessoryEvent: \(error)")
        }
        switch event.event {
        case .receipt(let receipt):
            // One that settles nothing (a second copy's, or a number never sent) is dropped: an
            // accessory could send those without end.
            guard pending.removeValue(forKey: receipt.hostSequence) != nil else { return nil }
            return .receipt(Receipt(sequence: receipt.hostSequence, stored: receipt.stored, alerted: receipt.alerted))
        case .response(let response):
            return .response(NotificationResponse(
                sourceIdentifier: response.id.sourceIdentifier,
                notificationIdentifier: response.id.notificationIdentifier,
                actionIdentifier: response.actionIdentifier,
                userText: response.hasUserText ? response.userText : nil
            ))
        case .removeOnPhone(let removal):
            return .removeOnPhone(removal.ids.map { NotificationID(source: $0.sourceIdentifier, id: $0.notificationIdentifier) })
        case nil:
            return nil
        }
    }
}
