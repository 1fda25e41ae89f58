import Foundation
import Logging
import NIOCore
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization

/// The accessory: owns the key, the store and the listener, and drives one `AccessoryConnection`
/// per host connection. All IO of the accessory side happens here and in the store.
public final class AccessoryDaemon: Sendable {
    public let configuration: AccessoryConfiguration
    public let store: AccessoryStore
    private let keyFile: KeyFile
    private let presenter: any Presenter
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var identity: AccessoryPrivateKey
        var exchange: KeyExchangeParameters?
    }

    /// Opens the store and loads the key, generating it on first start.
    public init(configuration: AccessoryConfiguration, presenter: any Presenter, logger: Logger) throws {
        try configuration.validate()
        // SQLite creates -wal and -shm files beside the store; they hold notification content too.
        umask(0o077)
        try prepareStateDirectory(configuration.stateDirectory)
        self.configuration = configuration
        self.presenter = presenter
        self.logger = logger
        keyFile = KeyFile(directory: configuration.stateDirectory, suite: configuration.suite)
        let (identity, created) = try keyFile.loadOrCreate(configuration.suite)
        store = try AccessoryStore(path: configuration.storePath)
        let exchange = try store.activeExchange(keyID: identity.keyID)
        state = Mutex(State(identity: identity, exchange: exchange))
        logger.info("\(created ? "generated" : "loaded") \(configuration.suite.rawValue) key \(hex(identity.keyID)) in \(keyFile.path)")
        if let exchange {
            logger.info("holding key exchange \(exchangeHex(exchange.exchangeID)); a host may resume it")
        }
    }

    /// The current public key's identifier, as offered in KeyOffer.
    public var keyID: [UInt8] { state.withLock { $0.identity.keyID } }

    /// Listens and serves hosts until the task is cancelled. `onListening` gets the bound port.
    public func run(onListening: @Sendable (Int) -> Void = { _ in }) async throws {
        let server = try await TCPLink.listen(host: configuration.host, port: configuration.port, limits: configuration.limits)
        let port = server.channel.localAddress?.port ?? configuration.port
        logger.info("listening on \(configuration.host):\(port)")
        presenter.present(.listening(host: configuration.host, port: port, suite: configuration.suite.rawValue, keyID: hex(keyID)))
        onListening(port)
        try await withTaskCancellationHandler {
            try await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ channel: TCPLinkChannel) async {
        let peer = channel.channel.remoteAddress?.description ?? "unknown"
        let (identity, exchange) = state.withLock { ($0.identity, $0.exchange) }
        var connection = AccessoryConnection(
            session: AccessorySession(
                identity: identity,
                exchange: exchange.map(AccessorySession.Exchange.init),
                configuration: configuration.sessionConfiguration
            ),
            chunkLength: TCPLink.defaultChunkLength
        )
        presenter.present(.connected(peer: peer))
        logger.info("host connected", metadata: ["peer": "\(peer)"])
        do {
            try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    // Chunks and a once-a-second tick arrive on one stream, so partial messages
                    // time out even on a link that has gone quiet.
                    let (inputs, continuation) = AsyncStream.makeStream(of: LinkInput.self)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            defer { continuation.finish() }
                            for try await item in inbound { continuation.yield(.inbound(item)) }
                        }
                        group.addTask {
                            while true {
                                try await Task.sleep(for: Self.tickInterval)
                                continuation.yield(.tick)
                            }
                        }
                        defer { group.cancelAll() }
                        for await input in inputs {
                            let actions: [AccessoryConnection.Action]
                            switch input {
                            case .inbound(.chunk(let chunk)): actions = connection.received(chunk: chunk, now: .now)
                            case .inbound(.invalid(let error)): actions = connection.streamFailed(error)
                            case .tick:
                                for id in connection.tick(now: .now) {
                                    let detail = "message \(id) from \(peer) was incomplete for longer than \(configuration.limits.partialMessageTimeout); dropped"
                                    logger.notice("\(detail)")
                                    presenter.present(.refused(detail: detail))
                                }
                                continue
                            }
                            if try await perform(actions, on: &connection, outbound: outbound) == .close { return }
                        }
                    }
                }
            } onCancel: {
                channel.channel.close(promise: nil)
            }
        } catch {
            logger.notice("connection ended with an error", metadata: ["peer": "\(peer)", "error": "\(error)"])
        }
        connection.disconnected()
        presenter.present(.disconnected(peer: peer))
        logger.info("host disconnected", metadata: ["peer": "\(peer)"])
    }

    private enum Outcome { case keepOpen, close }

    private enum LinkInput: Sendable {
        case inbound(TCPInbound)
        case tick
    }

    /// How often idle connections are checked for timed-out partial messages.
    static let tickInterval = Duration.seconds(1)

    /// Carries out actions in order; a delivery's receipt is sent after the store has it.
    private func perform(
        _ actions: [AccessoryConnection.Action],
        on connection: inout AccessoryConnection,
        outbound: NIOAsyncChannelOutboundWriter<[UInt8]>
    ) async throws -> Outcome {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .transmit(let chunks, let kind):
                logger.debug("sending \(kind) in \(chunks.count) chunk(s)")
                try await outbound.write(contentsOf: chunks)
            case .persistExchange(let parameters):
                let keyID = state.withLock { state in
                    state.exchange = parameters
                    return state.identity.keyID
                }
                try store.saveExchange(parameters, keyID: keyID, now: Date())
                presenter.present(.keyExchange(suite: parameters.cipherSuite, exchangeID: parameters.exchangeID, resumed: false))
                logger.info("key exchange \(exchangeHex(parameters.exchangeID)) completed (\(parameters.cipherSuite))")
            case .resumedExchange(let exchangeID):
                presenter.present(.keyExchange(suite: configuration.suite.rawValue, exchangeID: exchangeID, resumed: true))
                logger.info("host resumed key exchange \(exchangeHex(exchangeID))")
            case .forgetExchange(let exchangeID):
                state.withLock { if $0.exchange?.exchangeID == exchangeID { $0.exchange = nil } }
                try store.forgetExchange(exchangeID)
            case .replaceIdentity(let key):
                try keyFile.save(key)
                state.withLock { $0.identity = key }
                logger.notice("rotated to a fresh \(key.suite.rawValue) key \(hex(key.keyID)) after a decrypt failure")
                presenter.present(.resync(reason: "a message did not decrypt"))
            case .deliver(let delivery):
                do {
                    let outcome = try store.apply(delivery.event, exchangeID: delivery.exchangeID, now: Date()) { add in add.alerting.shouldAlert }
                    show(delivery.event, outcome)
                    queue.append(contentsOf: connection.delivered(delivery, stored: outcome.stored, alerted: outcome.alerted))
                } catch {
                    logger.error("could not store event #\(delivery.event.sequence): \(error)")
                    queue.append(contentsOf: connection.deliveryFailed("\(error)"))
                }
            case .refused(let error):
                logger.warning("refused input from host: \(error)")
                presenter.present(.refused(detail: error.description))
            case .close(let reason):
                logger.notice("closing connection: \(reason)")
                return .close
            }
        }
        return .keepOpen
    }

    private func show(_ event: HostEvent, _ outcome: ApplyOutcome) {
        let kind: String
        switch event.event {
        case .add: kind = "add"
        case .update: kind = "update"
        case .remove: kind = "remove"
        case .removeAll: kind = "remove-all"
        case nil: kind = "empty"
        }
        logger.info("applied \(kind) #\(event.sequence): \(outcome.decision)\(outcome.alerted ? ", alerting" : "")")
        if let record = outcome.record {
            logger.debug("notification content", metadata: ["title": "\(record.notification.title)", "body": "\(record.notification.body.plainText)"])
        }
        switch (event.event, outcome.decision) {
        case (.removeAll, .markRemoved): presenter.present(.removedAll(count: outcome.removedCount))
        case (_, .ignore(let reason)):
            if let id = event.notificationID {
                presenter.present(.ignored(source: id.sourceIdentifier, id: id.notificationIdentifier, reason: reason.rawValue))
            }
        case (.add, .insert), (.update, .insert): outcome.record.map { presenter.present(.notification($0, change: .added)) }
        case (_, .replace): outcome.record.map { presenter.present(.notification($0, change: .updated)) }
        case (_, .markRemoved): outcome.record.map { presenter.present(.notification($0, change: .removed)) }
        default: break
        }
    }
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
