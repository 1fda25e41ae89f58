import Logging
import NotifBridgeAccessory

/// The hook and desktop sinks the policy file asks for.
func makeAlertSinks(_ policy: PolicyFile, logger: Logger) throws -> [any AlertSink] {
    var sinks: [any AlertSink] = []
    if let hook = policy.hook {
        sinks.append(HookAlertSink(settings: hook, logger: logger))
    }
    if policy.desktopNotifications {
        guard let desktop = DesktopAlertSink(logger: logger) else {
            throw CommandFailure("desktopNotifications is on, but notify-send is not installed (apt-get install libnotify-bin)")
        }
        sinks.append(desktop)
    }
    return sinks
}
