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

/// Posts alerts as freedesktop notifications (org.freedesktop.Notifications via notify-send).
public struct DesktopAlertSink: AlertSink {
    private let notifier: DesktopNotifier

    /// nil when notify-send is not installed (a headless accessory).
    public init?(logger: Logger) {
        guard let notifier = DesktopNotifier(onResult: { result in
            if !result.succeeded { logger.notice("desktop notification failed: \(result.launchError ?? "exit \(result.exitStatus ?? -1)")") }
        }) else { return nil }
        self.notifier = notifier
    }

    public func alert(_ event: AlertEvent) {
        switch event {
        case .notification(let record, let decision):
            // A desktop notification is an alert: only for what the planner made one.
            guard decision.alerts else { return }
            let n = record.notification
            notifier.notify(
                appName: "NotifBridge · \(n.sourceName)",
                summary: n.hasTitle ? n.title : n.sourceName,
                body: n.hasBody ? n.body.plainText : "",
                urgency: decision.persistent ? .critical : .normal
            )
        case .burstSummary(let count):
            notifier.notify(appName: "NotifBridge", summary: "\(count) more notifications", body: "They arrived in a burst and are listed on the accessory.")
        }
    }
}
