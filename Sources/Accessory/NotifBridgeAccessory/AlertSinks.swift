import Foundation
import Logging
import NotifBridgeAccessoryCore
import NotifBridgeHooks
import NotifBridgeLogGate
import NotifBridgeWire
import Synchronization

/// Runs the policy file's hook command for alert decisions, with the event as JSON on stdin.
/// Its failures and the events a full queue drops are logged through the daemon's `LogGate`
/// (the configured few lines per window, then a count with the daemon's other summaries).
public final class HookAlertSink: AlertSink {
    private let runner: HookRunner
    private let trigger: PolicyFile.HookSettings.Trigger
    private let gate: LogGate
    private let logger: Logger
    /// Drops already told.
    private let droppedTold = Mutex(0)

    public init(settings: PolicyFile.HookSettings, logger: Logger, gate: LogGate) {
        trigger = settings.on
        self.gate = gate
        self.logger = logger
        let program = settings.command.first ?? "(no command)"
        runner = HookRunner(command: settings.command, timeout: .seconds(settings.timeoutSeconds)) { result in
            guard !result.succeeded else { return }
            if result.stopped {
                logger.info("hook \(program) was ended by the accessory's stop")
                return
            }
            let why = result.launchError ?? (result.timedOut ? "timed out" : "exited with \(result.exitStatus.map(String.init) ?? "signal \(result.signal ?? 0)")")
            gate.pass("the hook", .hooks) { logger.warning("hook \(program) failed: \(why)") }
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
        let dropped = runner.statistics.dropped
        // Commits alert from several tasks: a count read late must not count twice.
        let newly = droppedTold.withLock { told in
            defer { told = max(told, dropped) }
            return dropped - told
        }
        if newly > 0 {
            gate.pass("the hook", .hooks) { logger.warning("the hook's queue is full: \(dropped) event(s) dropped so far, the oldest first") }
        }
    }

    /// Terminates running hooks (SIGTERM to each one's group, SIGKILL after the grace) and
    /// drops the queued ones: none outlives the daemon, which may not run under systemd.
    /// Waits in a task of its own, so that the service group's cancellation, if the stop runs
    /// late, cannot cut the wait short before the SIGKILL.
    public func stop() async {
        runner.shutdown()
        let runner = runner
        _ = await Task { await runner.waitUntilIdle(timeout: Self.stopWait) }.value
    }

    /// The kill grace after SIGTERM, and a second for the reaping.
    public static let stopWait = Duration.seconds(2)

    /// For tests and shutdown: waits until every submitted hook has finished.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        await runner.waitUntilIdle(timeout: timeout)
    }
}
