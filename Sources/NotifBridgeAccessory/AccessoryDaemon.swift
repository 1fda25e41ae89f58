import Foundation
import Logging
import NIOCore
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization

/// The accessory: owns the key, the store, the listeners and the alert pipeline, and drives one
/// `AccessoryConnection` per host connection. All IO of the accessory side happens here and in
/// the store.
public final class AccessoryDaemon: Sendable {
    public let configuration: AccessoryConfiguration
    public let policy: PolicyFile
    public let store: AccessoryStore
    let keyFile: KeyFile
    let presenter: any Presenter
    let sinks: [any AlertSink]
    let logger: Logger
    let minuteOfDay: @Sendable () -> Int
    let state: Mutex<State>
    /// The burst limiter's state, apart from `state`: a commit holds it across its store write
    /// (plan, write, then advance, with no other commit in between), and nothing else waits on
    /// that. Lock order: this, then the store's writer; nothing inside a write takes a lock here.
    let burst: Mutex<BurstLimiter>
    /// Partial-message bytes shared by every link.
    public let reassemblyBudget: ReassemblyBudget
    /// Connections accepted and not yet ended, counted before they are served.
    let openConnections = Atomic<Int>(0)

    /// TCP connections counted against `ResourceLimits.maxConnections` now.
    public var openConnectionCount: Int { openConnections.load(ordering: .relaxed) }

    struct State {
        var identity: AccessoryPrivateKey
        var exchange: KeyExchangeParameters?
        var logThrottle: LogThrottle
        /// Open host connections, by when they connected; replies go to the newest established.
        var connections: [UUID: ConnectionHandle] = [:]
    }

    struct ConnectionHandle {
        var connectedAt: ContinuousClock.Instant
        var inputs: InputQueue<LinkInput>
        var established = false
    }

    /// Opens the store and loads the key, generating it on first start.
    /// - Parameter minuteOfDay: local time for quiet hours (injected so tests can pick the hour).
    public init(
        configuration: AccessoryConfiguration,
        policy: PolicyFile = .default,
        presenter: any Presenter,
        sinks: [any AlertSink] = [],
        logger: Logger,
        minuteOfDay: @escaping @Sendable () -> Int = AccessoryDaemon.localMinuteOfDay
    ) throws {
        try configuration.validate()
        // SQLite creates -wal and -shm files beside the store; they hold notification content too.
        umask(0o077)
        if case .tightened(let mode) = try prepareStateDirectory(configuration.stateDirectory) {
            logger.notice("state directory \(configuration.stateDirectory) had mode \(String(mode, radix: 8)); changed to \(String(mode & 0o700, radix: 8)) so only its owner can read the key and the store")
        }
        self.configuration = configuration
        self.policy = policy
        self.presenter = presenter
        self.sinks = sinks
        self.logger = logger
        self.minuteOfDay = minuteOfDay
        keyFile = KeyFile(directory: configuration.stateDirectory, suite: configuration.suite)
        let (identity, created) = try keyFile.loadOrCreate(configuration.suite)
        store = try AccessoryStore(path: configuration.storePath, retention: policy.retention)
        let exchange = try store.activeExchange(keyID: identity.keyID)
        let resources = configuration.resources
        state = Mutex(State(identity: identity, exchange: exchange, logThrottle: LogThrottle(burst: resources.logBurst, interval: resources.logInterval)))
        burst = Mutex(BurstLimiter(limit: policy.burst))
        reassemblyBudget = ReassemblyBudget(capacity: resources.reassemblyBudget)
        logger.info("\(created ? "generated" : "loaded") \(configuration.suite.rawValue) key \(hexString(identity.keyID)) in \(keyFile.path)")
        if let exchange {
            logger.info("holding key exchange \(exchangeHex(exchange.exchangeID)); a host may resume it")
        }
    }

    public static let localMinuteOfDay: @Sendable () -> Int = {
        let parts = Calendar.current.dateComponents([.hour, .minute], from: Date())
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    /// The current public key's identifier, as offered in KeyOffer.
    public var keyID: [UInt8] { state.withLock { $0.identity.keyID } }

    /// Listens for hosts and for local control requests until the task is cancelled.
    /// `onListening` gets the bound TCP port.
    public func run(onListening: @Sendable (Int) -> Void = { _ in }) async throws {
        let server = try await TCPLink.listen(host: configuration.host, port: configuration.port, limits: configuration.limits)
        let port = server.channel.localAddress?.port ?? configuration.port
        logger.info("listening on \(configuration.host):\(port); control socket \(configuration.controlSocketPath)")
        try await serveWithControl(
            announce: .listening(host: configuration.host, port: port, suite: configuration.suite.rawValue, keyID: hexString(keyID)),
            onReady: { onListening(port) },
            transport: {
                try await server.executeThenClose { connections in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in connections {
                            guard self.admitConnection(connection) else {
                                // Closed through the async channel, which must finish its writer.
                                group.addTask { try? await connection.executeThenClose { _, _ in } }
                                continue
                            }
                            group.addTask {
                                defer { self.openConnections.subtract(1, ordering: .relaxed) }
                                await self.serve(connection)
                            }
                        }
                    }
                }
            },
            stopTransport: { server.channel.close(promise: nil) }
        )
    }

    /// Serves the links a transport hands over (each BLE central that connects), until the task
    /// is cancelled. A stream that ends by itself (bluetoothd went away) is an error, so a
    /// supervisor can start the accessory again.
    /// - Parameter announce: what the presenter shows once the accessory can be reached.
    public func run(links: AsyncStream<ChunkLink>, announce: DisplayEvent) async throws {
        logger.info("serving links; control socket \(configuration.controlSocketPath)")
        try await serveWithControl(
            announce: announce,
            onReady: {},
            transport: {
                await withDiscardingTaskGroup { group in
                    for await link in links {
                        group.addTask { await self.serve(link) }
                    }
                }
                try Task.checkCancellation()
                throw TransportEnded()
            },
            stopTransport: {}
        )
    }

    /// Runs a transport beside the control socket and the burst summary ticker.
    private func serveWithControl(
        announce: DisplayEvent,
        onReady: @Sendable () -> Void,
        transport: @escaping @Sendable () async throws -> Void,
        stopTransport: @escaping @Sendable () -> Void
    ) async throws {
        let control = try await ControlSocket.listen(path: configuration.controlSocketPath)
        presenter.present(announce)
        onReady()
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await transport() }
                group.addTask {
                    try await control.executeThenClose { clients in
                        try await withThrowingDiscardingTaskGroup { group in
                            for try await client in clients {
                                group.addTask { await self.serveControl(client) }
                            }
                        }
                    }
                }
                group.addTask { try await self.runSummaryTicker() }
            }
        } onCancel: {
            stopTransport()
            control.channel.close(promise: nil)
        }
    }

    /// Inputs of one connection's loop: chunks, a once-a-second tick, and sealed messages the
    /// control socket asks to send.
    enum LinkInput: Sendable {
        case inbound(LinkInbound)
        case tick
        case send(AccessoryEvent.OneOf_Event, reply: SendReply)
    }

    /// How often idle connections are checked for timed-out partial messages.
    static let tickInterval = Duration.seconds(1)

    /// Counts an accepted connection in, or refuses it (the caller closes it) when
    /// `maxConnections` are open.
    private func admitConnection(_ connection: TCPLinkChannel) -> Bool {
        let limit = configuration.resources.maxConnections
        var current = openConnections.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = openConnections.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        let origin = Self.origin(of: connection)
        throttled(origin) {
            logger.notice("refused a connection from \(origin): \(limit) connections are open, the most this accessory serves")
        }
        return false
    }

    /// The remote address without its port, so every connection from one host counts as one.
    static func origin(of connection: TCPLinkChannel) -> String {
        connection.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    private func serve(_ channel: TCPLinkChannel) async {
        let peer = channel.channel.remoteAddress?.description ?? "unknown"
        let origin = Self.origin(of: channel)
        do {
            try await channel.withChunkLink(peer: peer, origin: origin) { link in
                await serve(link)
                link.close()
            }
        } catch {
            throttled(origin) { logger.notice("connection ended with an error", metadata: ["peer": "\(peer)", "error": "\(error)"]) }
        }
    }

    /// What a throttled line is about; each has its own share per origin.
    enum LogTopic: String {
        case refusals, connections
    }

    /// Runs `write` (a log line or a presenter event about `origin`) unless that origin has
    /// had its share of such lines in the current window; suppressed ones are summarised later.
    func throttled(_ origin: String, _ topic: LogTopic = .refusals, _ write: () -> Void) {
        let key = "\(topic.rawValue) from \(origin)"
        if state.withLock({ $0.logThrottle.admit(key, now: .now) }) { write() }
    }

    /// Serves one host connection of any transport until it ends: its own session, the shared
    /// key, store and alert pipeline. The BLE peripheral hands each central's link here too.
    public func serve(_ link: ChunkLink) async {
        let peer = link.peer
        let id = UUID()
        let inputs = InputQueue<LinkInput>(capacity: configuration.resources.maxQueuedInputs)
        let (identity, exchange) = state.withLock { state in
            state.connections[id] = ConnectionHandle(connectedAt: .now, inputs: inputs)
            return (state.identity, state.exchange)
        }
        var connection = AccessoryConnection(
            session: AccessorySession(identity: identity, exchange: exchange.map(AccessorySession.Exchange.init), configuration: configuration.sessionConfiguration),
            chunkLength: link.chunkLength,
            budget: reassemblyBudget
        )
        // A peer reconnecting in a loop would otherwise print two lines a connection.
        var announced = false
        throttled(link.origin, .connections) {
            announced = true
            presenter.present(.connected(peer: peer))
            logger.info("host connected", metadata: ["peer": "\(peer)"])
        }
        do {
            try await withTaskCancellationHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        defer { inputs.finish() }
                        for try await item in link.inbound { await inputs.pushWhenRoom(.inbound(item)) }
                    }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: Self.tickInterval)
                            inputs.push(.tick)
                        }
                    }
                    defer { group.cancelAll() }
                    while case let batch = await inputs.takeAll(), !batch.isEmpty {
                        let outcome = try await handle(batch, on: &connection, link: link, peer: peer)
                        markEstablished(id, connection.session.isEstablished)
                        if outcome == .close { return }
                    }
                }
            } onCancel: {
                link.close()
            }
        } catch {
            throttled(link.origin) { logger.notice("connection ended with an error", metadata: ["peer": "\(peer)", "error": "\(error)"]) }
        }
        state.withLock { _ = $0.connections.removeValue(forKey: id) }
        inputs.finish()
        for case .send(_, let reply) in inputs.drain() {
            reply.finish(.failure("the iPhone disconnected before the message was sent"))
        }
        connection.disconnected()
        if announced {
            presenter.present(.disconnected(peer: peer))
            logger.info("host disconnected", metadata: ["peer": "\(peer)"])
        }
    }

    /// Handles everything that arrived together. Deliveries wait until the end of the batch and
    /// are committed in one transaction; their receipts follow that commit.
    private func handle(
        _ batch: [LinkInput],
        on connection: inout AccessoryConnection,
        link: ChunkLink,
        peer: String
    ) async throws -> Outcome {
        var deliveries: [AccessorySession.Delivery] = []
        defer { if !deliveries.isEmpty { logger.error("\(deliveries.count) deliveries left unstored when the connection closed") } }
        for input in batch {
            let actions: [AccessoryConnection.Action]
            switch input {
            case .inbound(.chunk(let chunk)): actions = connection.received(chunk: chunk, now: .now)
            case .inbound(.invalid(let error)): actions = connection.streamFailed(error)
            case .inbound(.chunkLength(let length)):
                connection.setTransportChunkLength(length)
                continue
            case .tick:
                expirePartials(&connection, link: link)
                if connection.isHelloOverdue(now: .now) {
                    throttled(link.origin) { logger.notice("closing \(peer): no Hello within \(configuration.limits.helloTimeout)") }
                    return try await closing(&deliveries, &connection, link)
                }
                continue
            case .send(let event, let reply):
                guard let feature = connection.session.currentFeatureID else {
                    reply.finish(.failure("the iPhone has not completed the key exchange"))
                    continue
                }
                let sealed = connection.seal(event, featureID: feature)
                let outcome = try await perform(sealed, on: &connection, link: link, deliveries: &deliveries)
                reply.finish(sealed.isEmpty ? .failure("could not seal the message") : .success(()))
                if outcome == .close { return try await closing(&deliveries, &connection, link) }
                continue
            }
            if try await perform(actions, on: &connection, link: link, deliveries: &deliveries) == .close {
                return try await closing(&deliveries, &connection, link)
            }
        }
        try await commit(&deliveries, on: &connection, link: link)
        return .keepOpen
    }

    /// Stored events still get their receipts before the connection closes.
    private func closing(_ deliveries: inout [AccessorySession.Delivery], _ connection: inout AccessoryConnection, _ link: ChunkLink) async throws -> Outcome {
        try await commit(&deliveries, on: &connection, link: link)
        return .close
    }

    private func markEstablished(_ id: UUID, _ established: Bool) {
        state.withLock { $0.connections[id]?.established = established }
    }

    private func expirePartials(_ connection: inout AccessoryConnection, link: ChunkLink) {
        for id in connection.tick(now: .now) {
            let detail = "message \(id) from \(link.peer) was incomplete for longer than \(configuration.limits.partialMessageTimeout); dropped"
            throttled(link.origin) {
                logger.notice("\(detail)")
                presenter.present(.refused(detail: detail))
            }
        }
    }
}

/// The transport stopped handing over links while the daemon was running.
public struct TransportEnded: Error, CustomStringConvertible {
    public var description: String { "the transport ended (for Bluetooth: bluetoothd left the bus)" }
}

/// Completes a control request waiting for its message to be sent (or refused).
final class SendReply: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<Void, SendFailure>, Never>?>

    init(_ continuation: CheckedContinuation<Result<Void, SendFailure>, Never>) {
        self.continuation = Mutex(continuation)
    }

    func finish(_ result: Result<Void, SendFailure>) {
        continuation.withLock { $0?.resume(returning: result); $0 = nil }
    }

    /// A request dropped unanswered (its connection closed first) still gets an answer.
    deinit {
        finish(.failure("the iPhone disconnected before the message was sent"))
    }
}

struct SendFailure: Error, ExpressibleByStringLiteral, CustomStringConvertible {
    var description: String
    init(stringLiteral value: String) { description = value }
    init(_ description: String) { self.description = description }
}
