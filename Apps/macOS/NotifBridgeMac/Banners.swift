import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import Synchronization
import UserNotifications

/// Banners through `UNUserNotificationCenter`: one per notification the planner decided to
/// alert for, with the notification's own actions (a text field for text input), and what the
/// person does sent back to the iPhone. `Banner` (in the package) decides both directions.
final class Banners: NSObject, AlertSink, UNUserNotificationCenterDelegate, @unchecked Sendable {
    /// Banners remembered for their actions; older ones can no longer be answered from here.
    static let remembered = 256

    private let center = UNUserNotificationCenter.current()
    private let posted = Mutex<[String: Banner]>([:])
    private let order = Mutex<[String]>([])
    /// Sends a control request to the iPhone (the daemon's `ControlService.respond`).
    var respond: @Sendable (ControlRequest) async -> Void = { _ in }

    override init() {
        super.init()
        center.delegate = self
        Task { [center] in _ = try? await center.requestAuthorization(options: [.alert, .sound]) }
    }

    func alert(_ event: AlertEvent) {
        switch event {
        case .notification(let record, let decision):
            guard decision.alerts else { return }
            post(Banner(record))
        case .changed(let record, .updated):
            // An edit on the iPhone replaces a banner still remembered; one never shown stays so.
            let identifier = Banner.identifier(source: record.sourceIdentifier, id: record.notificationIdentifier)
            guard posted.withLock({ $0[identifier] != nil }) else { return }
            post(Banner(record))
        case .changed:
            // MenuPresenter withdraws a removed notification's banner as it shows the removal.
            return
        case .removedAll:
            let identifiers = order.withLock { $0 }
            center.removeDeliveredNotifications(withIdentifiers: identifiers)
        case .burstSummary(let count):
            let content = UNMutableNotificationContent()
            content.title = "NotifBridge"
            content.body = "\(count) more notifications arrived at once."
            let request = UNNotificationRequest(identifier: "notifbridge.burst", content: content, trigger: nil)
            Task { [center] in try? await center.add(request) }
        }
    }

    func withdraw(source: String, id: String) {
        center.removeDeliveredNotifications(withIdentifiers: [Banner.identifier(source: source, id: id)])
    }

    private func post(_ banner: Banner) {
        let actions: [UNNotificationAction] = banner.buttons.map { button in
            switch button.kind {
            case .background:
                UNNotificationAction(identifier: button.identifier, title: button.title, options: [])
            case .textInput(let placeholder):
                UNTextInputNotificationAction(identifier: button.identifier, title: button.title, options: [], textInputButtonTitle: "Send", textInputPlaceholder: placeholder)
            }
        }
        let category = UNNotificationCategory(identifier: banner.categoryIdentifier, actions: actions, intentIdentifiers: [], options: banner.sendsDismissal ? [.customDismissAction] : [])
        let categories = remember(banner, category: category)
        let content = UNMutableNotificationContent()
        content.title = banner.title
        content.subtitle = banner.subtitle
        content.body = banner.body
        content.threadIdentifier = banner.threadIdentifier
        content.categoryIdentifier = banner.categoryIdentifier
        content.sound = .default
        let request = UNNotificationRequest(identifier: banner.identifier, content: content, trigger: nil)
        center.setNotificationCategories(categories)
        Task { [center] in try? await center.add(request) }
    }

    /// Keeps the banner for its response and returns the categories of every remembered one.
    private let categories = Mutex<[String: UNNotificationCategory]>([:])

    private func remember(_ banner: Banner, category: UNNotificationCategory) -> Set<UNNotificationCategory> {
        let dropped: [String] = order.withLock { order in
            order.removeAll { $0 == banner.identifier }
            order.append(banner.identifier)
            let excess = max(order.count - Self.remembered, 0)
            defer { order.removeFirst(excess) }
            return Array(order.prefix(excess))
        }
        posted.withLock { posted in
            posted[banner.identifier] = banner
            for identifier in dropped { posted[identifier] = nil }
        }
        return categories.withLock { categories in
            categories[banner.identifier] = category
            for identifier in dropped { categories[identifier] = nil }
            return Set(categories.values)
        }
    }

    // MARK: UNUserNotificationCenterDelegate

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        guard let banner = posted.withLock({ $0[response.notification.request.identifier] }) else { return }
        let interaction: Banner.Interaction = switch response.actionIdentifier {
        case UNNotificationDefaultActionIdentifier: .opened
        case UNNotificationDismissActionIdentifier: .dismissed
        default: .action(identifier: response.actionIdentifier, text: (response as? UNTextInputNotificationResponse)?.userText)
        }
        if let request = banner.request(for: interaction) { await respond(request) }
    }

    /// The app is a menu-bar agent, always "in front": show banners anyway.
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        [.banner, .list, .sound]
    }
}
