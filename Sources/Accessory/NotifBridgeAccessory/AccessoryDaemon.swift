import Foundation
import Logging
import NIOCore
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization

/// The accessory, put together: the key (``KeyRing``), the store, the alert pipeline
/// (``AlertPipeline``), one ``ConnectionRunner`` per link that a ``LinkSource`` hands over, and
/// the control service (``ControlService``) on its Unix socket. The daemon owns the parts and
/// runs them side by side; each part holds only what it needs.
public final class AccessoryDaemon: Sendable {
    public let configuration: AccessoryConfiguration
    public let policy: PolicyFile
    public let store: AccessoryStore
    public let control: ControlService
    let keys: KeyRing
    let pipeline: AlertPipeline
    let runner: ConnectionRunner
    let ancs: ANCSRunner
    /// Replies over the internet, once `run` is given a relay.
    let internetOutbox: InternetOutbox
    let presenter: any Presenter
    let logger: Logger
    /// Rations log lines about what peers do, per peer; transports outside the daemon (the
    /// Bluetooth peripheral) share it, so its summaries cover them too.
    public let gate: LogGate
    /// Held from before the key is loaded until `run` returns (or the daemon goes away).
    let lock: StateLock
    /// Partial-message bytes shared by every link.
    public let reassemblyBudget: ReassemblyBudget
    let openConnections = OpenConnections()
    let registry: ConnectionRegistry
    /// Resumed by `shutdown()`; `run` then drains the connections and returns.
    private let stopRequests: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    /// Stops the daemon on a store that broke while it ran.
    let health: StoreHealth

    /// How long a graceful shutdown waits for connections to commit what they have read.
    public static let shutdownGrace = Duration.seconds(10)

    /// TCP connections counted against `ResourceLimits.maxConnections` now.
    public var openConnectionCount: Int { openConnections.current }

    /// Locks the state directory (one daemon per directory: ``StateLock``), opens the store and
    /// loads the key, generating it on first start.
    /// - Parameters:
    ///   - keyStore: where the key is kept; a 0600 file in the state directory unless given
    ///     (the Mac accessory keeps it in the Keychain).
    ///   - minuteOfDay: local time for quiet hours (injected so tests can pick the hour).
    ///   - gate: the rationing of peer-driven log lines, shared with `sinks` (made from the
    ///     configuration's resources unless given).
    public init(
        configuration: AccessoryConfiguration,
        policy: PolicyFile = .default,
        presenter: any Presenter,
        sinks: [any AlertSink] = [],
        gate: LogGate? = nil,
        keyStore: (any AccessoryKeyStore)? = nil,
        logger: Logger,
        minuteOfDay: @escaping @Sendable () -> Int = AccessoryDaemon.localMinuteOfDay
    ) throws {
        try configuration.validate()
        // SQLite creates -wal and -shm files beside the store; they hold notification content too.
        umask(0o077)
        if case .tightened(let mode) = try prepareStateDirectory(configuration.stateDirectory) {
            logger.notice("state directory \(configuration.stateDirectory) had mode \(String(mode, radix: 8)); changed to \(String(mode & 0o700, radix: 8)) so only its owner can read the key and the store")
        }
        lock = try StateLock(directory: configuration.stateDirectory)
        self.configuration = configuration
        self.policy = policy
        self.presenter = presenter
        self.logger = logger
        Self.tightenStoreFiles(configuration.storePath, logger: logger)
        let keyStore = keyStore ?? KeyFile(directory: configuration.stateDirectory, suite: configuration.suite)
        let (identity, created) = try keyStore.loadOrCreate(configuration.suite)
        let stops = AsyncStream.makeStream(of: Void.self)
        stopRequests = stops
        let health = StoreHealth { stops.continuation.yield() }
        self.health = health
        do {
            store = try AccessoryStore(path: configuration.storePath, retention: policy.retention) { error in
                if health.report(error) { logger.critical("the store failed in a way that will not pass (\(error)); stopping") }
            }
        } catch {
            throw StoreUnavailable(path: configuration.storePath, underlying: error, unwritable: Self.unwritable(configuration.storePath))
        }
        let exchange = try store.activeExchange(keyID: identity.keyID)
        keys = KeyRing(store: keyStore, identity: identity, exchange: exchange)
        let resources = configuration.resources
        let gate = gate ?? resources.makeLogGate()
        self.gate = gate
        reassemblyBudget = ReassemblyBudget(capacity: resources.reassemblyBudget)
        pipeline = AlertPipeline(
            store: store, policy: policy, presenter: presenter, sinks: sinks, logger: logger, gate: gate, minuteOfDay: minuteOfDay
        )
        registry = ConnectionRegistry()
        runner = ConnectionRunner(
            configuration: configuration, keys: keys, store: store, pipeline: pipeline, registry: registry,
            gate: gate, presenter: presenter, logger: logger, budget: reassemblyBudget
        )
        ancs = ANCSRunner(store: store, pipeline: pipeline, registry: registry, presenter: presenter, logger: logger, gate: gate)
        internetOutbox = InternetOutbox(store: store)
        control = ControlService(store: store, registry: registry, presenter: presenter, logger: logger, ancs: ancs, internet: internetOutbox)
        if created {
            logger.notice("generated a new \(configuration.suite.rawValue) key \(hexString(identity.keyID)) in \(keyStore.location)")
            // The store outlived its key: the iPhone paired with a key that no longer exists.
            if let lost = try? store.activeExchangeKeys(suite: configuration.suite.rawValue, other: identity.keyID), !lost.isEmpty {
                logger.warning("the store holds a key exchange made with key \(lost.map { hexString($0) }.joined(separator: ", ")), whose key file is gone; the iPhone paired with that key cannot reach this one until it pairs again")
            }
        } else {
            logger.info("loaded \(configuration.suite.rawValue) key \(hexString(identity.keyID)) in \(keyStore.location)")
        }
        if let exchange {
            logger.info("holding key exchange \(exchangeHex(exchange.exchangeID)); a host may resume it")
        }
    }

    /// The store and its WAL and shared-memory files hold notification text. A store made here
    /// is 0600 from the start; one copied in with a looser mode is tightened before SQLite opens
    /// it, since SQLite gives the WAL and shm files the database's mode.
    static func tightenStoreFiles(_ storePath: String, logger: Logger) {
        for path in [storePath, storePath + "-wal", storePath + "-shm"] {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let mode = UInt16(info.st_mode & 0o777)
            guard mode & 0o077 != 0 else { continue }
            if chmod(path, mode_t(mode & 0o700)) == 0 {
                logger.notice("\(path) had mode \(String(mode, radix: 8)); changed to \(String(mode & 0o700, radix: 8)): it holds notification text")
            } else {
                logger.warning("\(path) has mode \(String(mode, radix: 8)) and cannot be made private: \(String(cString: strerror(errno)))")
            }
        }
    }

    public static let localMinuteOfDay: @Sendable () -> Int = {
        let parts = Calendar.current.dateComponents([.hour, .minute], from: Date())
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    /// The current public key's identifier, as offered in KeyOffer.
    public var keyID: [UInt8] { keys.identity.keyID }

    /// Serves TCP links on the configured address, and the control socket, until the task is
    /// cancelled. `onListening` gets the bound TCP port.
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        try await run(tcpSource(onListening: onListening))
    }

    /// The TCP listener on the configured address, as a link source.
    public func tcpSource(onListening: @escaping @Sendable (Int) -> Void = { _ in }) -> any LinkSource {
        TCPLinkSource(
            host: configuration.host, port: configuration.port, limits: configuration.limits,
            maxConnections: configuration.resources.maxConnections, suite: configuration.suite.rawValue,
            keyID: { [keys] in hexString(keys.identity.keyID) }, gate: gate, logger: logger,
            onListening: onListening, open: openConnections
        )
    }

    /// Serves the links a transport has opened (each BLE central that connects), and the control
    /// socket, until the task is cancelled.
    /// - Parameter announce: what the presenter shows once the accessory can be reached.
    /// - Parameter ancs: notifications from the connected iPhone's ANCS service, if consumed.
    public func run(links: AsyncStream<ChunkLink>, announce: PresenterEvent, ancs: (any ANCSPort)? = nil) async throws {
        try await run(StreamLinkSource(links, announcing: announce), ancs: ancs)
    }

    /// Runs a link source (and the notifications of an ANCS port, if given) beside the control
    /// service and the once-a-half-second summaries (of rationed log lines and of the burst
    /// limiter's held-back notifications), until the task is cancelled or `shutdown()` is
    /// called. `onReady` runs once peers can reach the accessory.
    /// - Parameter internet: the relay inbox, for the internet transport, if one is configured.
    public func run(
        _ source: some LinkSource, ancs port: (any ANCSPort)? = nil, internet: (any InternetMessageSource)? = nil,
        onReady: @escaping @Sendable () -> Void = {}
    ) async throws {
        // Released here, not only when the daemon goes away: an owner that keeps this object may
        // start another daemon on the directory once this one has stopped.
        defer { lock.release() }
        let socket = try await ControlSocket.listen(path: configuration.controlSocketPath)
        logger.info("control socket \(configuration.controlSocketPath)")
        do {
            try await withTaskCancellationHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        try await source.run(
                            ready: { event in
                                self.presenter.present(event)
                                onReady()
                            },
                            serve: { await self.serve($0) }
                        )
                    }
                    group.addTask { [control] in
                        try await socket.executeThenClose { clients in
                            try await withThrowingDiscardingTaskGroup { group in
                                for try await client in clients {
                                    group.addTask { await control.serve(client) }
                                }
                            }
                        }
                    }
                    if let port {
                        group.addTask { await self.ancs.run(port) }
                    }
                    internetOutbox.attach(internet)
                    if let internet {
                        let relay = RelayRunner(source: internet, store: store, pipeline: pipeline, keys: keys, presenter: presenter, logger: logger, gate: gate)
                        group.addTask { await relay.run() }
                    }
                    group.addTask { try await self.runSummaries() }
                    group.addTask { try await self.drainOnShutdown() }
                }
            } onCancel: {
                socket.channel.close(promise: nil)
            }
        } catch is GracefulStop {
            socket.channel.close(promise: nil)
            logger.info("stopped: every connection committed what it had read")
        }
        if let broken = health.broken { throw StoreHealth.Broken(path: configuration.storePath, underlying: broken) }
    }

    /// Stops gracefully: no new links; each open connection commits the events it has read,
    /// sends their receipts and closes; then `run` returns. A connection still busy after
    /// `shutdownGrace` is cancelled (its unacknowledged events are sent again next time).
    public func shutdown() {
        stopRequests.continuation.yield()
    }

    /// Stops what the alert sinks still run (hooks): after `run` has returned, when no commit
    /// can start another.
    public func stopSinks() async {
        for sink in pipeline.sinks { await sink.stop() }
    }

    /// Thrown inside `run` to end its task group once the connections have drained.
    private struct GracefulStop: Error {}

    /// The store could not be opened (damaged, not a database, not readable): says which file.
    public struct StoreUnavailable: Error, CustomStringConvertible {
        public var path: String
        public var underlying: any Error
        /// The store, or the directory its journal goes in, that cannot be written: then SQLite's
        /// own words name the table GRDB probes with, which says nothing to the person.
        public var unwritable: String?
        public var description: String {
            guard let unwritable else { return "cannot open the notification store \(path): \(underlying)" }
            return "cannot open the notification store \(path): \(unwritable) cannot be written (a read-only file system, an immutable file, or its permissions),"
                + " and the accessory writes each notification to it before acknowledging it"
        }
    }

    /// The store file, or else its directory, if either exists and cannot be written, by access(2):
    /// which knows of read-only mounts and immutable files, even for root.
    static func unwritable(_ storePath: String) -> String? {
        let directory = (storePath as NSString).deletingLastPathComponent
        for path in [storePath, directory] where FileManager.default.fileExists(atPath: path) && !FileManager.default.isWritableFile(atPath: path) {
            return path
        }
        return nil
    }

    private func drainOnShutdown() async throws {
        for await _ in stopRequests.stream { break }
        try Task.checkCancellation()
        registry.closeAll()
        let deadline = ContinuousClock.now + Self.shutdownGrace
        while !registry.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        if !registry.isEmpty { logger.warning("connections still open after \(Self.shutdownGrace); cancelling them") }
        throw GracefulStop()
    }

    /// Serves one link of any transport until it ends (see ``ConnectionRunner``).
    public func serve(_ link: ChunkLink) async {
        await runner.serve(link)
    }

    private func runSummaries() async throws {
        while true {
            try await Task.sleep(for: .milliseconds(500))
            for line in gate.summaryLines() { logger.notice("\(line)") }
            pipeline.summarise()
        }
    }
}
