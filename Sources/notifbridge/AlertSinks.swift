import Logging
import NotifBridgeAccessory

/// The hook and desktop sinks the policy file asks for.
func makeAlertSinks(_ policy: PolicyFile, logger: Logger) throws -> [any AlertSink] {
    []
}
