import AccessoryNotifications
import AccessoryTransportExtension
import ExtensionFoundation

/// The data provider: the system hands it each notification to forward. The handler's logic is
/// the package's `NotificationsForwarder`, the same that the simulated iPhone runs on Linux.
@main
struct DataProviderExtension: AccessoryDataProvider {
    var extensionPoint: AppExtensionPoint {
        Identifier("com.apple.accessory-data-provider")
        Implementing {
            NotificationsForwarding { NotificationHandler() }
        }
    }
}
