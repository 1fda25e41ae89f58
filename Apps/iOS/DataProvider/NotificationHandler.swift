import AccessoryNotifications
import AccessoryTransportExtension
import Foundation
import enum NotifBridgeHostCore.HostOperation

/// `AccessoryNotificationsHandler` over `ForwardingQueue`. The system calls it from any thread;
/// every call goes into one ordered queue, because a task per call can start out of order, and
/// a removal that overtakes its update resurrects the notification (reference/apple-api.md §2.2).
final class NotificationHandler: NotificationsForwarding.AccessoryNotificationsHandler {
    private let queue = ForwardingQueue()

    func didActivate(for session: NotificationsForwarding.Session) {
        queue.submit(.activate(session))
    }

    func didInvalidate() {
        queue.submit(.invalidate)
    }

    /// True only when the accessory's receipt says it alerted; false when it did not, or when no
    /// receipt came in time (the system then lets the iPhone alert).
    func addNotification(_ notification: AccessoryNotification, alertingContext: AlertingContext) async throws -> Bool {
        try await queue.add(notification, alertingContext)
    }

    func updateNotification(_ notification: AccessoryNotification) {
        queue.submit(.update(notification))
    }

    func removeNotification(identifier: AccessoryNotification.Identifier) {
        queue.submit(.operation(.remove(source: identifier.sourceIdentifier, id: identifier.notificationIdentifier)))
    }

    func removeAllNotifications() {
        queue.submit(.operation(.removeAll))
    }

    /// An accessory message, decrypted by the system: a receipt, a response or a removal.
    func messageHandler(_ message: TransportMessage) {
        queue.submit(.message(message.data))
    }
}
