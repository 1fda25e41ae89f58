import Foundation
import Logging
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeWire

/// Serves one link of any transport until it ends: its own ``AccessoryConnection`` (session,
/// reassembly, framing) fed from the link, a tick and the control service; the accessory's key,
/// store and alert pipeline shared with every other link.
struct ConnectionRunner: Sendable {
    let configuration: AccessoryConfiguration
    let keys: KeyRing
    let store: AccessoryStore
    let pipeline: AlertPipeline
    let registry: ConnectionRegistry
    let gate: LogGate
    let presenter: any Presenter
    let logger: Logger
    /// Partial-message bytes shared by every link.
    let budget: ReassemblyBudget
    /// The transport session each exchange's messages came under, for replies over the internet.
    let features = SavedFeatures()

    /// How often idle connections are checked for timed-out partial messages and missed deadlines.
    static let tickInterval = Duration.seconds(1)

    enum Outcome { case keepOpen, close }

    func serve(_ link: ChunkLink) async {
        let peer = link.peer
        let opened = ContinuousClock.now
        let id = UUID()
        let inputs = InputQueue<LinkInput>(capacity: configuration.resources.maxQueuedInputs)
        guard registry.add(id, inputs: inputs) else {
            logger.info("closing \(peer): the accessory is shutting down")
            link.close()
            return
        }
        let (identity, exchange) = keys.snapshot
        var connection = AccessoryConnection(
            session: AccessorySession(
                identity: identity,
                exchange: exchange.map(AccessorySession.Exchange.init),
                configuration: configuration.sessionConfiguration(for: link.kind)
            ),
            chunkLength: link.chunkLength,
            budget: budget,
            now: opened
        )
        let helloTimeout = connection.session.configuration.limits.helloTimeout
        let backstop = HelloBackstop(openedAt: opened, helloTimeout: helloTimeout, stall: Self.tickInterval)
        let link = backstop.watching(link)
        // A peer reconnecting in a loop would otherwise print two lines a connection.
        var announced = false
        gate.pass(link.origin, .connections) {
            announced = true
            presenter.present(.connected(peer: peer))
            logger.info("host connected", metadata: ["peer": "\(peer)", "link": "\(link.kind.rawValue)"])
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
                            try await ConnectionTimer.sleep(for: Self.tickInterval)
                            inputs.push(.tick(.now))
                            if backstop.isStuck(now: .now) {
                                gate.pass(link.origin) { logger.notice("closing the connection from \(peer): no Hello within \(helloTimeout), and it reads nothing") }
                                link.close()
                                return
                            }
                        }
                    }
                    defer { group.cancelAll() }
                    var pacing = CommitPacing(window: configuration.commitWindow)
                    while case let batch = await inputs.takeAll(), !batch.isEmpty {
                        let outcome = try await handle(batch, readAt: .now, on: &connection, pacing: &pacing, link: link, inputs: inputs, backstop: backstop)
                        registry.setEstablished(id, connection.session.isEstablished)
                        if outcome == .close { return }
                    }
                }
            } onCancel: {
                link.close()
            }
        } catch {
            gate.pass(link.origin) { logger.notice("connection ended with an error", metadata: ["peer": "\(peer)", "error": "\(error)"]) }
        }
        registry.remove(id)
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

    /// Handles everything that arrived together, and, when `pacing` says a batch with deliveries
    /// in it should wait, what arrives within the commit window after it. Deliveries are
    /// committed in one transaction; their receipts follow that commit.
    private func handle(
        _ batch: [LinkInput],
        readAt: ContinuousClock.Instant,
        on connection: inout AccessoryConnection,
        pacing: inout CommitPacing,
        link: ChunkLink,
        inputs: InputQueue<LinkInput>,
        backstop: HelloBackstop
    ) async throws -> Outcome {
        var deliveries: [AccessorySession.Delivery] = []
        defer { if !deliveries.isEmpty { logger.error("\(deliveries.count) deliveries left unstored when the connection closed") } }
        var pending = batch[...]
        var waited = false
        while true {
            if pending.isEmpty {
                guard !waited, pacing.shouldWait(deliveries: deliveries.count, readAt: readAt) else { break }
                waited = true
                // Cancelled (shutting down): commit what was read rather than drop it.
                try? await ConnectionTimer.sleep(for: configuration.commitWindow)
                pending = inputs.takeAvailable()[...]
                continue
            }
            let input = pending.removeFirst()
            let actions: [AccessoryConnection.Action]
            switch input {
            case .inbound(.chunk(let chunk)):
                actions = connection.received(chunk: chunk, now: .now)
                if connection.hasReceivedHello { backstop.sawHello() }
            case .inbound(.invalid(let error)): actions = connection.streamFailed(error)
            case .inbound(.chunkLength(let length)):
                connection.setTransportChunkLength(length)
                continue
            case .tick(let queuedAt):
                expirePartials(&connection, link: link)
                guard connection.isHelloOverdue(now: queuedAt) else { continue }
                actions = connection.helloTimedOut()
            case .shutdown:
                logger.info("closing \(link.peer): the accessory is shutting down")
                return try await closing(&deliveries, &connection, link)
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
        if !deliveries.isEmpty {
            try await commit(&deliveries, on: &connection, link: link)
            pacing.committed(at: .now)
        }
        return .keepOpen
    }

    /// Stored events still get their receipts before the connection closes.
    private func closing(_ deliveries: inout [AccessorySession.Delivery], _ connection: inout AccessoryConnection, _ link: ChunkLink) async throws -> Outcome {
        try await commit(&deliveries, on: &connection, link: link)
        return .close
    }

    /// Carries out actions in order. Deliveries are collected for `commit`, which stores them
    /// together and only then sends their receipts. Messages that follow one another go to the
    /// link in one write (a batch's receipts: one wake-up of the transport, not one each).
    private func perform(
        _ actions: [AccessoryConnection.Action],
        on connection: inout AccessoryConnection,
        link: ChunkLink,
        deliveries: inout [AccessorySession.Delivery]
    ) async throws -> Outcome {
        var unsent: [[UInt8]] = []
        func flush() async throws {
            guard !unsent.isEmpty else { return }
            defer { unsent.removeAll() }
            try await link.write(unsent)
        }
        for action in actions {
            if case .send(let transmission) = action {
                logger.debug("sending \(transmission.kind) in \(transmission.chunks.count) chunk(s)")
                unsent += transmission.chunks
                continue
            }
            try await flush()
            switch action {
            case .send:
                continue
            case .persistExchange(let parameters, let internet):
                try keys.hold(parameters) { keyID in _ = try store.saveExchange(parameters, keyID: keyID, now: Date(), internet: internet) }
                presenter.present(.keyExchange(suite: parameters.cipherSuite, exchangeID: parameters.exchangeID, resumed: false))
                logger.info("key exchange \(exchangeHex(parameters.exchangeID)) completed (\(parameters.cipherSuite))")
            case .resumedExchange(let exchangeID):
                presenter.present(.keyExchange(suite: configuration.suite.rawValue, exchangeID: exchangeID, resumed: true))
                logger.info("host resumed key exchange \(exchangeHex(exchangeID))")
            case .forgetExchange(let exchangeID):
                keys.forget(exchangeID)
                try store.forgetExchange(exchangeID)
            case .replaceIdentity(let key):
                try keys.replace(with: key)
                logger.notice("rotated to a fresh \(key.suite.rawValue) key \(hexString(key.keyID)) after a decrypt failure")
                presenter.present(.resync(reason: "a message did not decrypt"))
            case .deliver(let delivery):
                deliveries.append(delivery)
            case .refused(let error):
                gate.pass(link.origin) {
                    logger.warning("refused input from \(link.peer): \(error)")
                    presenter.present(.refused(detail: error.description))
                }
            case .close(let reason):
                gate.pass(link.origin) { logger.notice("closing the connection from \(link.peer): \(reason)") }
                return .close
            }
        }
        try await flush()
        return .keepOpen
    }

    /// Has the pipeline store the collected deliveries, then sends their receipts.
    private func commit(_ deliveries: inout [AccessorySession.Delivery], on connection: inout AccessoryConnection, link: ChunkLink) async throws {
        guard !deliveries.isEmpty else { return }
        let batch = deliveries
        deliveries.removeAll()
        var replies: [AccessoryConnection.Action] = []
        for (delivery, result) in zip(batch, pipeline.commit(batch)) {
            switch result {
            case .success(let outcome):
                replies += connection.delivered(delivery, stored: outcome.stored, alerted: outcome.alerted)
                do {
                    try features.record(delivery.featureID, exchangeID: delivery.exchangeID, in: store)
                } catch {
                    logger.error("cannot save the exchange's transport session (replies over the internet need it): \(error)")
                }
            case .failure(let error): replies += connection.deliveryFailed("\(error)")
            }
        }
        var none: [AccessorySession.Delivery] = []
        _ = try await perform(replies, on: &connection, link: link, deliveries: &none)
    }

    private func expirePartials(_ connection: inout AccessoryConnection, link: ChunkLink) {
        for id in connection.tick(now: .now) {
            let detail = "message \(id) from \(link.peer) was incomplete for longer than \(configuration.limits.partialMessageTimeout); dropped"
            gate.pass(link.origin) {
                logger.notice("\(detail)")
                presenter.present(.refused(detail: detail))
            }
        }
    }
}
