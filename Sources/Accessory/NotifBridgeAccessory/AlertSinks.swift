import Foundation
import Logging
import NotifBridgeAccessoryCore
import NotifBridgeHooks
import NotifBridgeWire

/// Runs the policy file's hook command for alert decisions, with the event as JSON on stdin.
public struct HookAlertSink: AlertSink {
    private let runner: HookRunner
    private let trigger: PolicyFile.HookSettings.Trigger

    public init(settings: PolicyFile.HookSettings, logger: Logger) {
        trigger = settings.on
        runner = HookRunner(command: settings.command, timeout: .milliseconds(Int64(settings.timeoutSeconds * 1000))) { result in
            guard !result.succeeded else { return }
            let why = result.launchError ?? (result.timedOut ? "timed out" : "exited with \(result.exitStatus.map(String.init) ?? "signal \(result.signal ?? 0)")")
            logger.warning("hook \(settings.command[0]) failed: \(why)")
            // The hook's own output may echo notification content: only at debug.
            logger.debug("hook output", metadata: ["output": "\(result.output)"])
        }
    }

    public func alert(_ event: AlertEvent) {
        var object: [String: Any]
        switch event {
        case .notification(let record, let decision):
            // `on: alerts` routes only what the planner made an alert; it never re-decides.
            guard trigger == .all || decision.alerts else { return }
            object = ["event": "notification", "notification": JSONPresenter.object(record), "decision": JSONPresenter.object(decision)]
        case .burstSummary(let count):
            object = ["event": "burstSummary", "count": count]
        case .changed, .removedAll:
            return
        }
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(UInt8(ascii: "\n"))
        runner.submit(data)
    }

    /// For tests and shutdown: waits until every submitted hook has finished.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        await runner.waitUntilIdle(timeout: timeout)
    }
}
