import AccessoryNotifications

/// What each `AccessoryError` means to the person holding the phone, and what they can do.
enum ForwardingMessages {
    static func explain(_ error: any Error) -> String {
        guard let error = error as? AccessoryError else {
            return "Forwarding failed: \(error.localizedDescription)"
        }
        switch error {
        case .unsupportedPlatform:
            return "Notification forwarding is available only on iPhone, in the EU, with an Apple Account of an EU country or region."
        case .unsupportedAccessory:
            return "This accessory cannot receive forwarded notifications. Pair it again from this app."
        case .accessoryNotificationsUnavailable:
            return "Notification forwarding is not available right now (another accessory may be receiving them, or a restriction applies). See Settings › Notifications › Notification Forwarding."
        case .invalidNotificationResponse:
            return "The phone could not carry out an action chosen on the accessory."
        case .coordinationTimeout:
            return "The accessory did not answer in time; notifications alert on the iPhone meanwhile."
        case .internalInconsistency:
            return "iOS reported an internal error. Restart the iPhone, then try again."
        @unknown default:
            return "Forwarding failed: \(error)"
        }
    }
}
