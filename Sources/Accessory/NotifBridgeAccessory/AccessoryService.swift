import Logging
import NotifBridgeStore
import ServiceLifecycle

/// The daemon as a service of a `ServiceGroup` (swift-service-lifecycle), which turns SIGTERM
/// and SIGINT into a graceful shutdown: the source stops taking links (the BLE peripheral stops
/// advertising in `onStop`), each connection commits the batch in hand and sends its receipts,
/// and the store is closed. A supervisor hears READY=1, WATCHDOG=1 and STOPPING=1 through
/// `notifier` (systemd's `Type=notify`).
public struct AccessoryService: Service {
    let daemon: AccessoryDaemon
    let source: any LinkSource
    let ancs: (any ANCSPort)?
    let internet: (any InternetMessageSource)?
    let notifier: SystemdNotifier
    let onStop: @Sendable () async -> Void

    /// - Parameter ancs: notifications from the connected iPhone's ANCS service, if consumed.
    /// - Parameter internet: the relay inbox of the internet transport, if configured.
    public init(
        daemon: AccessoryDaemon, source: any LinkSource, ancs: (any ANCSPort)? = nil, internet: (any InternetMessageSource)? = nil,
        notifier: SystemdNotifier = SystemdNotifier(), onStop: @escaping @Sendable () async -> Void = {}
    ) {
        self.daemon = daemon
        self.source = source
        self.ancs = ancs
        self.internet = internet
        self.notifier = notifier
        self.onStop = onStop
    }

    public func run() async throws {
        let (daemon, source, ancs, internet, notifier, logger) = (daemon, source, ancs, internet, notifier, daemon.logger)
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await daemon.run(source, ancs: ancs, internet: internet, onReady: {
                            if let failure = notifier.notify("READY=1") { logger.warning("could not tell systemd: \(failure)") }
                        })
                    }
                    if notifier.watchdogInterval != nil {
                        group.addTask { try await notifier.runWatchdog() }
                    }
                    // The daemon returns (stopped, or failed); the watchdog goes with it.
                    try await group.next()
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                notifier.notify("STOPPING=1")
                daemon.shutdown()
            }
        } catch {
            await onStop()
            await daemon.stopSinks()
            throw error
        }
        await onStop()
        await daemon.stopSinks()
        try daemon.store.close()
    }
}
