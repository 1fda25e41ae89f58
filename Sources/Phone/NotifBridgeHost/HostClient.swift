import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization

/// The simulated iPhone connected to an accessory over the TCP link. It carries out what
/// `HostSession` decides: one writer keeps outbound messages in the order they were sealed.
public final class HostClient: Sendable {
    let state: Mutex<HostConnection>
    let outbound: AsyncStream<Outbound>.Continuation
    private let mailbox = EventMailbox<HostClientEvent>(limit: HostClient.maxUnreadEvents)
    private let onEvent: @Sendable (HostClientEvent) -> Void
    /// Set once the caller is done, so the close it causes is not reported as a failure.
    private let closing = Mutex(false)
    /// Set once the link ended or the session closed it; the first reason is the one told.
    private let finished = Mutex(false)
    /// Closes the link when this side ends it, whether or not the body is waiting on events.
    private let closeLink: @Sendable () -> Void
    /// Answers to the accessory (KeyMaterial, BindFeature) queued and not yet written.
    private let unwrittenAnswers = Mutex(0)

    /// Answers the accessory may leave unread before the link is closed. An exchange needs
    /// two; an accessory that keeps offering keys without reading would otherwise grow the
    /// queue for as long as it sends (1 KB a KeyMaterial).
    public static let maxUnwrittenAnswers = 16
    /// Messages the accessory sends of its own accord (responses, removals, Resyncs,
    /// LinkErrors, KeyConfirms) that may wait unread in the event mailbox, besides one for each
    /// event number the phone sent on the link (a LinkError may answer each: the accessory's
    /// store failed); one more closes the link. Receipts are not counted: the session drops
    /// any that settles no event.
    public static let maxUnreadEvents = 10_000
    /// Every receipt with its arrival time, for load runs.
    private let receiptLog = ReceiptLog()

    /// Chunks of one link message; sealed events carry their sequence for the completion.
    struct Outbound: Sendable {
        var chunks: [[UInt8]]
        var sequence: UInt64?
        /// An answer to something the accessory sent, counted in `unwrittenAnswers`.
        var answer = false
    }

    private init(
        session: HostSession, limits: WireLimits, chunkLength: Int, outbound: AsyncStream<Outbound>.Continuation,
        closeLink: @escaping @Sendable () -> Void, onEvent: @escaping @Sendable (HostClientEvent) -> Void
    ) {
        state = Mutex(HostConnection(session: session, limits: limits, chunkLength: chunkLength))
        self.outbound = outbound
        self.closeLink = closeLink
        self.onEvent = onEvent
    }

    /// Connects over TCP, runs `body` with the live connection, then disconnects. Returns the
    /// body's result and the session as it ended (keep it to resume the exchange next time).
    /// With `accessoryKeyID`, an exchange with any other key ends the link before anything is
    /// sealed to it (`HostSession.requiredAccessoryKeyID`).
    public static func connect<T: Sendable>(
        host: String,
        port: Int,
        session: HostSession,
        limits: WireLimits = .default,
        accessoryKeyID: Data? = nil,
        onEvent: @escaping @Sendable (HostClientEvent) -> Void = { _ in },
        _ body: @Sendable (HostClient) async throws -> T
    ) async throws -> (T, HostSession) {
        let channel = try await TCPLink.connect(host: host, port: port, limits: limits)
        return try await channel.withChunkLink(peer: "\(host):\(port)") { link in
            try await run(over: link, session: session, limits: limits, accessoryKeyID: accessoryKeyID, onEvent: onEvent, body)
        }
    }

    /// Runs `body` over a link of any transport (TCP, or GATT as a BLE central), then returns
    /// its result and the session as it ended.
    public static func run<T: Sendable>(
        over link: ChunkLink,
        session: HostSession,
        limits: WireLimits = .default,
        accessoryKeyID: Data? = nil,
        onEvent: @escaping @Sendable (HostClientEvent) -> Void = { _ in },
        _ body: @Sendable (HostClient) async throws -> T
    ) async throws -> (T, HostSession) {
        let (stream, continuation) = AsyncStream.makeStream(of: Outbound.self)
        var session = session
        session.requiredAccessoryKeyID = accessoryKeyID
        let connection = HostClient(
            session: session, limits: limits, chunkLength: link.chunkLength, outbound: continuation,
            closeLink: { link.close() }, onEvent: onEvent
        )
        let result = try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                // The transport relay's completions: written, or failed with the link.
                for await item in stream {
                    do {
                        try await link.write(item.chunks)
                    } catch {
                        if let sequence = item.sequence { connection.completed(sequence, .failure(.transportFailed)) }
                        // Nothing more can be written: the link is over, whatever still reads.
                        connection.endLink(reason: "writing to the accessory failed: \(socketErrorText(error))")
                        throw error
                    }
                    if let sequence = item.sequence { connection.completed(sequence, .success(())) }
                    if item.answer { connection.unwrittenAnswers.withLock { $0 -= 1 } }
                }
                return nil
            }
            group.addTask {
                do {
                    for try await item in link.inbound { connection.received(item) }
                    connection.finish(reason: "accessory closed the connection")
                } catch is CancellationError {
                    connection.finish(reason: "disconnected")
                } catch {
                    connection.finish(reason: "connection failed: \(socketErrorText(error))")
                }
                return nil
            }
            connection.perform(connection.step { $0.connected(maxChunkLength: link.chunkLength) })
            defer {
                // Closing it ourselves, after the body returned or threw: no "closed" event, which
                // would print as the accessory's doing before the error that says why.
                connection.closing.withLock { $0 = true }
                group.cancelAll()
                link.close()
            }
            let value = try await body(connection)
            continuation.finish()
            return value
        }
        return (result, connection.state.withLock { state in
            state.session.disconnected()
            return state.session
        })
    }

    // MARK: Sending

    /// Forwards one operation as the data provider would and returns its sequence number. It is
    /// sealed and sent at once when the link is established, else when it is. Throws if the
    /// accessory could never accept it, as `session.send(message:)` would.
    @discardableResult
    public func send(_ operation: HostOperation, now: Date = Date()) throws -> UInt64 {
        var sequence: UInt64 = 0
        var failure: AccessoryError?
        let actions = step { session in
            do throws(AccessoryError) {
                let sent = try session.send(operation, now: now)
                sequence = sent.sequence
                return sent.actions
            } catch {
                failure = error
                return []
            }
        }
        if let failure {
            post(.notSent(reason: "\(operation.summaryLine): \(failure)"))
            throw HostFailure(description: "\(operation.summaryLine) not sent: \(failure)")
        }
        perform(actions)
        return sequence
    }

    /// `addNotification(_:alertingContext:)`: forwards the add and returns whether the accessory
    /// alerted, from its receipt. Throws `AccessoryError.coordinationTimeout` when no receipt
    /// comes in time, as the system does.
    public func addNotification(_ notification: HostNotification, alerting: HostAlerting, timeout: Duration = .seconds(10), now: Date = Date()) async throws -> Bool {
        let sequence = try send(.add(notification, alerting), now: now)
        let log = receiptLog
        let entry = try await withThrowingTaskGroup(of: ReceiptLog.Entry?.self) { group in
            group.addTask { await log.receipt(for: sequence) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw AccessoryError.coordinationTimeout
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let entry else { throw AccessoryError.coordinationTimeout }
        return entry.alerted
    }

    /// The transport relay's completion for one sealed event, handed to the system.
    private func completed(_ sequence: UInt64, _ result: AccessoryMessageResult) {
        perform(step { $0.transportCompleted(sequence: sequence, result: result) })
    }

    // MARK: Waiting

    public func nextEvent(timeout: Duration = .seconds(10)) async throws -> HostClientEvent? {
        try await mailbox.next(timeout: timeout, waitingFor: "an accessory message")
    }

    /// Waits for the key exchange (or its resumption) to complete. Messages that do not
    /// complete it spend the `timeout` rather than restart it (``WaitBudget``).
    @discardableResult
    public func waitUntilEstablished(timeout: Duration = .seconds(15)) async throws -> (exchangeID: UInt64, suite: String, resumed: Bool) {
        var budget = WaitBudget(timeout)
        while let event = try await nextDuringExchange(&budget) {
            switch event {
            case .established(let id, let suite, let resumed): return (id, suite, resumed)
            case .closed(let reason): throw HostFailure(description: "link closed before the key exchange completed: \(reason)")
            case .peerError(let code, let detail): throw HostFailure(description: "accessory refused the key exchange: \(code): \(detail)")
            default: budget.spend()
            }
        }
        throw HostFailure(description: "link closed before the key exchange completed")
    }

    /// A connection that stays silent is most often something other than an accessory on that
    /// port (a web server answers and closes, which reads as "closed" instead).
    private func nextDuringExchange(_ budget: inout WaitBudget) async throws -> HostClientEvent? {
        do {
            return try await budget.next(from: mailbox, waitingFor: "the key exchange")
        } catch let error as HostTimeout {
            guard budget.ignored == 0 else {
                throw HostFailure(description: "\(error) (\(budget.timeout)): the accessory sent \(budget.ignored) message(s) but did not complete it")
            }
            throw HostFailure(description: "\(error) (\(budget.timeout)): the connection is open but nothing answered; is a NotifBridge accessory listening there?")
        }
    }

    /// Waits until every sequence in `sequences` has a receipt; returns the receipts. Gives up
    /// when `timeout` passes with no receipt for one of them, whatever else arrives meanwhile.
    public func waitForReceipts(_ sequences: Set<UInt64>, timeout: Duration = .seconds(15)) async throws -> [UInt64: (stored: Bool, alerted: Bool)] {
        var receipts: [UInt64: (stored: Bool, alerted: Bool)] = [:]
        var budget = WaitBudget(timeout)
        while receipts.count < sequences.count {
            let event: HostClientEvent?
            do {
                event = try await budget.next(from: mailbox, waitingFor: "receipts")
            } catch is HostTimeout {
                // Named only now: listing what is missing costs as much as the set is long.
                throw HostTimeout(waitingFor: "receipts for \(sequences.subtracting(receipts.keys).sorted())")
            }
            guard let event else {
                throw HostFailure(description: "link closed with \(sequences.count - receipts.count) receipt(s) outstanding")
            }
            switch event {
            case .receipt(let sequence, let stored, let alerted) where sequences.contains(sequence) && receipts[sequence] == nil:
                receipts[sequence] = (stored, alerted)
                budget = WaitBudget(timeout)
            case .closed(let reason): throw HostFailure(description: "link closed while waiting for receipts: \(reason)")
            default: budget.spend()
            }
        }
        return receipts
    }

    /// Receipts as they arrived, with their times (load runs read it instead of the mailbox).
    public func receiptTimes() -> ReceiptLog { receiptLog }

    /// Events queued or sent but not acknowledged.
    public var outstandingCount: Int { state.withLock { $0.session.outstandingCount } }

    /// What iOS keeps of the completed exchange (its HPKE sender exports the internet keys).
    public var pairing: HostSession.Pairing? { state.withLock { $0.session.pairing } }

    // MARK: Inbound

    private func received(_ item: LinkInbound) {
        switch item {
        case .chunkLength(let length):
            state.withLock { $0.setTransportChunkLength(length) }
        case .invalid(let error):
            endLink(reason: "accessory stream is unusable: \(error)")
        case .chunk(let chunk):
            let result: Result<[HostSession.Action], WireError> = state.withLock { state in
                do throws(WireError) {
                    // Another key than `accessoryKeyID` is refused by the session itself, at its
                    // KeyOffer: nothing is ever sealed to it.
                    let actions = try state.received(chunk: chunk, now: .now)
                    let answers = actions.count { if case .write(_, nil) = $0 { true } else { false } }
                    let unwritten = unwrittenAnswers.withLock { unwritten in
                        unwritten += answers
                        return unwritten
                    }
                    if unwritten > Self.maxUnwrittenAnswers {
                        outbound.finish()
                        return .success([.close(reason: "the accessory left \(unwritten - answers) answers unread and asked for more; closed")])
                    }
                    return .success(enqueueWrites(actions, answers: true))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let actions): perform(actions)
            case .failure(let error): post(.peerError(code: "local", detail: "accessory sent bytes that do not decode: \(error)"))
            }
        }
    }

    /// Runs one session step and queues its messages before the lock is released, so the link
    /// carries them in exactly the order the session produced them (a BindFeature can never
    /// fall behind a Sealed sent by another task). Returns the remaining actions.
    func step(_ body: (inout HostSession) -> [HostSession.Action]) -> [HostSession.Action] {
        state.withLock { state in
            enqueueWrites(state.step(body))
        }
    }

    /// With `answers`, the writes that carry no event (KeyMaterial, BindFeature) are counted
    /// as answers to the accessory until written. Each event sent may draw a LinkError in
    /// answer, which the mailbox then has room for.
    private func enqueueWrites(_ actions: [HostConnection.Action], answers: Bool = false) -> [HostSession.Action] {
        actions.compactMap { action in
            switch action {
            case .write(let chunks, let sequence):
                outbound.yield(Outbound(chunks: chunks, sequence: sequence, answer: answers && sequence == nil))
                if let sequence { mailbox.makeRoom(forAnswerTo: sequence) }
                return nil
            case .session(let action):
                return action
            }
        }
    }

    func perform(_ actions: [HostSession.Action]) {
        for action in actions {
            switch action {
            case .send, .transmit:
                break  // already queued by `step`, in order
            case .established(let exchangeID, let suite, let resumed):
                post(.established(exchangeID: exchangeID, suite: suite, resumed: resumed))
            case .receipt(let receipt):
                receiptLog.record(receipt.sequence, stored: receipt.stored, alerted: receipt.alerted)
                post(.receipt(sequence: receipt.sequence, stored: receipt.stored, alerted: receipt.alerted))
            case .response(let response):
                post(.response(source: response.sourceIdentifier, id: response.notificationIdentifier, action: response.actionIdentifier, text: response.userText))
            case .removeOnPhone(let ids):
                post(.removeOnPhone(ids.map { ($0.source, $0.id) }))
            case .resync(let reason):
                post(.resync(reason: String(describing: reason)))
            case .peerError(let error):
                post(.peerError(code: String(describing: error.code), detail: error.detail))
            case .close(let reason):
                endLink(reason: reason)
            }
        }
    }

    func post(_ event: HostClientEvent) {
        onEvent(event)
        guard mailbox.post(event, limited: event.isAccessorysOwn) else {
            return endLink(reason: "the accessory sent more messages of its own than may wait unread (\(Self.maxUnreadEvents), and one for each event sent); closed")
        }
    }

    /// This side ends the link: nothing more is sent, and the link closes at once.
    func endLink(reason: String) {
        finish(reason: reason)
        closeLink()
    }

    private func finish(reason: String) {
        guard finished.withLock({ done in defer { done = true }; return !done }) else { return }
        if !closing.withLock({ $0 }) { post(.closed(reason: reason)) }
        mailbox.finish()
        receiptLog.close()
        outbound.finish()
    }
}

/// A wait's timeout, spent by the messages that do not advance it: a peer that keeps sending
/// those cannot hold the wait open for ever, and one that sends nothing gets the whole timeout.
/// Each wait's timer starts when its waiting task runs, not when it was asked for, so a busy
/// machine does not eat the timeout before the wait has begun.
struct WaitBudget {
    let timeout: Duration
    private var remaining: Duration
    private var asked: ContinuousClock.Instant?

    init(_ timeout: Duration) {
        self.timeout = timeout
        remaining = timeout
    }

    mutating func next(from mailbox: EventMailbox<HostClientEvent>, waitingFor: String) async throws -> HostClientEvent? {
        guard remaining > .zero else { throw HostTimeout(waitingFor: waitingFor) }
        asked = .now
        return try await mailbox.next(timeout: remaining, waitingFor: waitingFor)
    }

    /// Messages that did not advance the wait, for the error that ends it.
    private(set) var ignored = 0

    /// The last message did not advance the wait: what it took comes off the timeout.
    mutating func spend() {
        ignored += 1
        guard let asked else { return }
        remaining -= ContinuousClock.now - asked
    }
}

public struct HostFailure: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

extension HostClientEvent {
    /// Caused by the accessory, as often as it likes: every message of its own, and each
    /// exchange it confirms (it may offer a new key at any time). Receipts settle one event
    /// each (others are dropped), and the rest is the phone's own doing.
    fileprivate var isAccessorysOwn: Bool {
        switch self {
        case .response, .removeOnPhone, .resync, .peerError, .established: true
        case .receipt, .notSent, .closed: false
        }
    }
}
