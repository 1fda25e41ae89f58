import Logging
import NotifBridgeAccessory
import NotifBridgeLogGate
#if canImport(NotifBridgeDesktop)
import NotifBridgeControl
import NotifBridgeDesktop
#endif

/// The hook and desktop sinks the policy file asks for.
struct AlertSinks {
    var all: [any AlertSink] = []
    /// Answers from desktop notifications go to the daemon once it exists.
    var answered: [(@escaping @Sendable (ControlRequest) async -> ControlReply) -> Void] = []

    static func make(_ policy: PolicyFile, gate: LogGate, logger: Logger) async throws -> AlertSinks {
        var sinks = AlertSinks()
        if let hook = policy.hook {
            sinks.all.append(HookAlertSink(settings: hook, logger: logger, gate: gate))
        }
        if policy.desktopNotifications {
            #if canImport(NotifBridgeDesktop)
            do {
                let desktop = try await FreedesktopNotificationSink.connect(logger: logger)
                sinks.all.append(desktop)
                sinks.answered.append { desktop.respond(using: $0) }
            } catch {
                throw CommandFailure("desktopNotifications is on, but no notification server answered on the session bus (DBUS_SESSION_BUS_ADDRESS): \(error)")
            }
            #else
            throw CommandFailure("desktopNotifications needs D-Bus, which this build does not have")
            #endif
        }
        return sinks
    }
}
