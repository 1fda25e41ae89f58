import Foundation
import NotifBridgeHostCore
import NotifBridgeWire

/// How the system can reach the accessory right now: a way to run a link of each transport
/// that is in range, and a way to post to the relay when the iPhone is online.
public struct HostTransports: Sendable {
    /// Runs one link with `session` for as long as `body` runs and returns the session as the
    /// link ended (``HostClient/connect(host:port:session:limits:onEvent:_:)`` has this
    /// shape); throws when the accessory cannot be reached that way.
    public typealias LinkRunner = @Sendable (HostSession, @escaping @Sendable (HostClient) async throws -> Void) async throws -> HostSession

    public var links: [AccessoryTransport: LinkRunner]
    /// The transport extension's post to the relay; nil while offline.
    public var internet: InternetTransport.Post?

    public init(links: [AccessoryTransport: LinkRunner] = [:], internet: InternetTransport.Post? = nil) {
        self.links = links
        self.internet = internet
    }

    var reachable: [AccessoryTransport] {
        AccessoryTransport.allCases.filter { $0 == .internet ? internet != nil : links[$0] != nil }
    }
}

/// The emulated iOS system for one accessory across its transports: every message goes by the
/// first transport that takes it (``TransportRouter``: Bluetooth, then the local network, then
/// the internet; `.transportUnavailable` moves on). One data provider numbers every event,
/// whichever transport carries it, so an event that went over the internet and is carried
/// again by the next link keeps its number, and the accessory's ledger stores it once.
///
/// Links carry one ``HostSession`` in turn, resuming its exchange; the internet keys come from
/// that exchange and live in `pairingFile`, saved before each post.
public final class HostSystem {
    public struct Delivery: Sendable, Hashable {
        public var sequence: UInt64
        public var via: AccessoryTransport
        /// The accessory's receipt (over a link); nil over the internet, whose receipts would come
        /// back as pushes.
        public var alerted: Bool?
    }

    /// The session as the last link ended with it (an open link holds the live one).
    private var session: HostSession
    public let pairingFile: InternetPairingFile
    public let routing: TransportRouter.Configuration
    public let receiptTimeout: Duration
    private var link: OpenLink?
    private var internet: InternetTransport?

    public init(session: HostSession, pairingFile: InternetPairingFile, routing: TransportRouter.Configuration = .init(), receiptTimeout: Duration = .seconds(10)) {
        self.session = session
        self.pairingFile = pairingFile
        self.routing = routing
        self.receiptTimeout = receiptTimeout
    }

    /// The exchange in use: the open link's, else the one the last link ended with.
    public var pairing: HostSession.Pairing? { link?.connection.pairing ?? session.pairing }
    /// Events sent by any transport that the accessory has not acknowledged yet.
    public var outstandingCount: Int { link?.connection.outstandingCount ?? session.outstandingCount }

    /// Forwards `operations` in order, each by the first transport that takes it, and returns
    /// how each went. Throws when none can: every transport is out of reach. `transports` is
    /// the world as it is now, so a link the last call left open is closed first (its
    /// transport may be out of range now); the next link resumes the exchange.
    public func forward(_ operations: [HostOperation], over transports: HostTransports, now: Date = Date()) async throws -> [Delivery] {
        try await closeLink()
        var router = TransportRouter(configuration: routing)
        var actions: [TransportRouter.Action] = []
        for transport in transports.reachable { actions += router.handle(.available(transport)) }
        for index in operations.indices { actions += router.handle(.submitted(UInt64(index))) }
        var numbered: [Int: UInt64] = [:]
        var deliveries: [Delivery] = []
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .delivered:
                continue
            case .held(let id):
                throw HostFailure(description: "no transport reaches the accessory for \(operations[Int(id)].summaryLine)")
            case .send(let id, let transport, let delay):
                if delay > .zero { try await Task.sleep(for: delay) }
                let index = Int(id)
                let outcome = try await attempt(operations[index], numbered: &numbered[index], via: transport, transports, now: now)
                switch outcome {
                case .success(let delivery): deliveries.append(delivery)
                case .failure(.transportUnavailable): actions += router.handle(.unavailable(transport))
                case .failure(.transportFailed): break
                }
                actions += router.handle(.completed(id, outcome.map { _ in () }))
            }
        }
        try await settle()
        return deliveries
    }

    /// Ends the open link, if any, once what it carries again has been acknowledged.
    public func close() async throws {
        try await settle()
        try await closeLink()
    }

    private func attempt(_ operation: HostOperation, numbered sequence: inout UInt64?, via transport: AccessoryTransport, _ transports: HostTransports, now: Date) async throws -> Result<Delivery, AccessoryMessageError> {
        if transport == .internet {
            guard let upload = transports.internet else { return .failure(.transportUnavailable) }
            try await closeLink()
            return try await post(operation, numbered: &sequence, with: upload, now: now)
        }
        if link?.transport != transport { try await closeLink() }
        if link == nil {
            guard let runner = transports.links[transport], let opened = await OpenLink.open(transport, runner, session: session, timeout: receiptTimeout) else {
                return .failure(.transportUnavailable)
            }
            link = opened
        }
        guard let connection = link?.connection else { return .failure(.transportUnavailable) }
        // Numbered before (sent over the internet, or on a link that went): the link's
        // establishment already carried it again.
        let number = try sequence ?? connection.send(operation, now: now)
        sequence = number
        switch await connection.receipt(for: number, timeout: receiptTimeout) {
        case .arrived(let alerted): return .success(Delivery(sequence: number, via: transport, alerted: alerted))
        case .timedOut: return .failure(.transportFailed)
        case .linkEnded:
            try await closeLink()
            return .failure(.transportUnavailable)
        }
    }

    private func post(_ operation: HostOperation, numbered sequence: inout UInt64?, with post: @escaping InternetTransport.Post, now: Date) async throws -> Result<Delivery, AccessoryMessageError> {
        let transport = try internetTransport(post)
        let outbound: NotificationsForwarder.Outbound
        if let sequence {
            guard let unacknowledged = session.forwarder.unacknowledged(sequence) else {
                return .success(Delivery(sequence: sequence, via: .internet, alerted: nil))
            }
            outbound = unacknowledged
        } else {
            outbound = try session.hold(operation, now: now)
            sequence = outbound.sequence
        }
        do {
            _ = try await transport.send(outbound)
        } catch let error as AccessoryMessageError {
            return .failure(error)
        }
        return .success(Delivery(sequence: outbound.sequence, via: .internet, alerted: nil))
    }

    /// The internet transport of the session's exchange. The file is written only for a new
    /// exchange: one saved for this exchange holds the index to go on from, and starting over
    /// at 0 would use message keys twice.
    private func internetTransport(_ post: @escaping InternetTransport.Post) throws -> InternetTransport {
        guard let pairing = session.pairing else {
            throw HostFailure(description: "the internet transport needs a key exchange made over a link first")
        }
        if let internet, internet.pairing.exchangeID == pairing.exchangeID { return internet }
        if try pairingFile.load()?.exchangeID != pairing.exchangeID {
            guard let keys = try InternetPairing(pairing, configuration: session.configuration, nextSequence: session.forwarder.nextSequence) else {
                throw HostFailure(description: "the exchange used P-256; the internet transport takes X-Wing only")
            }
            try pairingFile.save(keys)
        }
        let transport = try InternetTransport(file: pairingFile, post: post)
        internet = transport
        return transport
    }

    /// Waits (at most `receiptTimeout`) until the open link has nothing unacknowledged.
    private func settle() async throws {
        guard let connection = link?.connection else { return }
        let deadline = ContinuousClock.now + receiptTimeout
        while connection.outstandingCount > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private func closeLink() async throws {
        guard let open = link else { return }
        link = nil
        session = try await open.close()
    }
}

/// A link kept open between messages: its runner's body waits until it is released.
private struct OpenLink: Sendable {
    let transport: AccessoryTransport
    let connection: HostClient
    let task: Task<HostSession, any Error>
    let release: AsyncStream<Void>.Continuation

    /// The link once its exchange is established (or resumed); nil when it cannot be opened.
    static func open(_ transport: AccessoryTransport, _ runner: @escaping HostTransports.LinkRunner, session: HostSession, timeout: Duration) async -> OpenLink? {
        let (connections, published) = AsyncStream.makeStream(of: HostClient.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            defer { published.finish() }
            return try await runner(session) { connection in
                published.yield(connection)
                published.finish()
                for await _ in released {}
            }
        }
        var iterator = connections.makeAsyncIterator()
        guard let connection = await iterator.next() else {
            release.finish()
            _ = await task.result
            return nil
        }
        let link = OpenLink(transport: transport, connection: connection, task: task, release: release)
        guard (try? await connection.waitUntilEstablished(timeout: timeout)) != nil else {
            _ = try? await link.close()
            return nil
        }
        return link
    }

    func close() async throws -> HostSession {
        release.finish()
        return try await task.value
    }
}

extension HostClient {
    enum ReceiptWait {
        case arrived(alerted: Bool)
        case timedOut
        case linkEnded
    }

    /// The receipt for `sequence`, however long ago it arrived on this link.
    func receipt(for sequence: UInt64, timeout: Duration) async -> ReceiptWait {
        let log = receiptTimes()
        return await withTaskGroup(of: ReceiptWait?.self) { group in
            group.addTask { await log.receipt(for: sequence).map { .arrived(alerted: $0.alerted) } ?? .linkEnded }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .timedOut
            }
            defer { group.cancelAll() }
            return await group.next().flatMap { $0 } ?? .timedOut
        }
    }
}
