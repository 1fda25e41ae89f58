import AccessoryNotifications
import AccessoryTransportExtension
import Foundation
import struct NotifBridgeHostCore.NotificationsForwarder
import enum NotifBridgeHostCore.HostOperation

/// What the queue's task owns: the session and the forwarder, whose next sequence number is
/// kept in the extension's own defaults (the process may end at any time, and numbers are
/// never reused: PROTOCOL.md §4.4).
struct ForwardingState {
    private static let sequenceKey = "nextSequence"
    private var session: NotificationsForwarding.Session?
    private var forwarder = NotificationsForwarder(nextSequence: UInt64(UserDefaults.standard.integer(forKey: ForwardingState.sequenceKey)))

    mutating func handle(_ item: ForwardingQueue.Work, receipts: ReceiptWaiters) async {
        switch item {
        case .activate(let session):
            self.session = session
            // Whatever has no receipt yet goes again, in order, under its own number.
            for outbound in forwarder.unacknowledged { await transmit(outbound.plaintext) }
        case .invalidate:
            session = nil
        case .add(let notification, let alerting, let reply):
            let operation = HostOperation.add(await notification.hostNotification(), alerting.hostAlerting)
            reply(await send(operation))
        case .update(let notification):
            _ = await send(.update(await notification.hostNotification()))
        case .operation(let operation):
            _ = await send(operation)
        case .message(let data):
            await received(data, receipts: receipts)
        }
    }

    /// Numbers, serialises and sends one call; the number it used, or nil if nothing went.
    private mutating func send(_ operation: HostOperation) async -> UInt64? {
        guard let outbound = try? forwarder.serialize(operation, now: Date()) else { return nil }
        forwarder.sent(outbound)
        UserDefaults.standard.set(Int(forwarder.nextSequence), forKey: Self.sequenceKey)
        await transmit(outbound.plaintext)
        return outbound.sequence
    }

    /// The system seals the plaintext and hands it to the transport extension. A failure here
    /// leaves the event unacknowledged; it goes again with the next session.
    private func transmit(_ plaintext: Data) async {
        try? await session?.send(message: AccessoryMessage {
            AccessoryMessage.Payload(transport: .bluetooth, data: plaintext)
        })
    }

    private mutating func received(_ data: Data, receipts: ReceiptWaiters) async {
        guard let inbound = try? forwarder.messageHandler(data) else { return }
        switch inbound {
        case .receipt(let receipt):
            receipts.resolve(receipt.sequence, alerted: receipt.alerted)
        case .response(let response):
            try? await session?.sendResponse(AccessoryNotifications.NotificationResponse(
                sourceIdentifier: response.sourceIdentifier,
                notificationIdentifier: response.notificationIdentifier,
                actionIdentifier: response.actionIdentifier,
                userText: response.userText
            ))
        case .removeOnPhone(let ids):
            for (source, group) in Dictionary(grouping: ids, by: \.source) {
                try? await session?.removeNotifications(withIdentifiers: group.map(\.id), sourceIdentifier: source)
            }
        }
    }
}
