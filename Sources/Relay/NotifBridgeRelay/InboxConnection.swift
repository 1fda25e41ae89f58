import Foundation
import Logging
import NotifBridgeLogGate
import NotifBridgeRelayCore
import NotifBridgeWire
import Synchronization

/// One accessory's open inbox: carries out ``InboxSession``'s actions against the store and
/// hands the frames to send, in order, to the connection's writer.
///
/// Inputs arrive from two places, the WebSocket's reader (the accessory's acks) and the hub (a
/// post for this accessory), and ``run()`` takes them one at a time, awaiting the store in
/// between, so the frames leave in the order the session chose them. What waits is bounded: the
/// reader waits until its frame is handled before it reads the next, posts collapse into one
/// pending wake-up, and the frames waiting for the writer are at most ``maxUnwrittenFrames``:
/// the window bounds the deliveries, but each push of the accessory's is answered with a frame,
/// and an accessory that pushed without reading piled them up without end.
final class InboxConnection: Sendable {
    enum Output: Sendable {
        case frame([UInt8])
        /// The last output: close the WebSocket, saying why.
        case close(Ending)
    }

    enum Ending: Sendable, Equatable {
        /// The accessory broke a rule (§11.2, §11.3).
        case refused(RelayError)
        /// Nothing wrong with the accessory: a newer connection of it took over, or the store failed.
        case goingAway(String)
        /// The relay is stopping (graceful shutdown).
        case stopping
    }

    private enum Input: Sendable {
        case event(InboxSession.Event)
        /// A frame from the accessory; its reader waits for `handled` before reading on.
        case received([UInt8], handled: CheckedContinuation<Void, Never>)
        case end(Ending, handled: CheckedContinuation<Void, Never>?)
    }

    let accessoryID: String
    /// The inbox token the connection was opened with, for ``TokenWatch``.
    let token: String
    let output: AsyncStream<Output>
    private let continuation: AsyncStream<Output>.Continuation
    private let inputs: AsyncStream<Input>
    private let inputContinuation: AsyncStream<Input>.Continuation
    /// A post's wake-up is queued and not yet taken: further posts need no other.
    private let wakeQueued = Mutex(false)
    /// Frames handed to the writer and not yet written.
    private let unwritten = Mutex(0)
    /// Past this many frames waiting for the writer the accessory is not reading: the window's
    /// deliveries, the answers to as many pushes, and room to spare.
    let maxUnwrittenFrames: Int
    private let store: any RelayStorage
    private let pusher: (any APNsPushing)?
    private let pushes: RateGate
    private let logger: Logger
    private let gate: LogGate
    private let now: @Sendable () -> Date

    init(
        accessoryID: String, token: String, store: any RelayStorage, pusher: (any APNsPushing)?, pushes: RateGate, logger: Logger, gate: LogGate,
        now: @escaping @Sendable () -> Date
    ) {
        self.accessoryID = accessoryID
        self.token = token
        self.store = store
        self.pusher = pusher
        self.pushes = pushes
        self.logger = logger
        self.gate = gate
        self.now = now
        maxUnwrittenFrames = 4 * store.limits.window
        (output, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (inputs, inputContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// The WebSocket opened: the session sends what waits.
    func opened() {
        inputContinuation.yield(.event(.opened))
    }

    /// A message was queued for this accessory.
    func posted() {
        let queue = wakeQueued.withLock { queued in
            defer { queued = true }
            return !queued
        }
        if queue { inputContinuation.yield(.event(.posted)) }
    }

    /// A frame from the accessory; returns once it is handled.
    func receive(_ bytes: [UInt8]) async {
        await withCheckedContinuation { handled in
            if case .terminated = inputContinuation.yield(.received(bytes, handled: handled)) { handled.resume() }
        }
    }

    /// Ends the connection from outside: a newer connection of the same accessory took over, or
    /// the accessory sent what it must not.
    func end(_ reason: Ending) {
        inputContinuation.yield(.end(reason, handled: nil))
    }

    /// Ends the connection because of what the accessory sent; returns once the close is
    /// queued for the writer.
    func refuse(_ error: RelayError) async {
        await withCheckedContinuation { handled in
            if case .terminated = inputContinuation.yield(.end(.refused(error), handled: handled)) { handled.resume() }
        }
    }

    /// The writer wrote a frame.
    func wrote() {
        unwritten.withLock { $0 -= 1 }
    }

    /// The WebSocket closed: nothing more is taken or sent.
    func finished() {
        inputContinuation.finish()
        continuation.finish()
    }

    /// Takes the inputs one at a time until the session ends or the connection finishes.
    func run() async {
        var session: InboxSession? = InboxSession(limits: store.limits)
        for await input in inputs {
            switch input {
            case .event(let event):
                if case .posted = event { wakeQueued.withLock { $0 = false } }
                await handle(event, &session)
            case .received(let bytes, let handled):
                await handle(.received(bytes), &session)
                handled.resume()
            case .end(let reason, let handled):
                end(&session, reason)
                handled?.resume()
            }
            if session == nil { break }
        }
        // Readers still waiting on a frame go on (to find the connection closing).
        inputContinuation.finish()
        for await input in inputs {
            switch input {
            case .received(_, let handled): handled.resume()
            case .end(_, let handled): handled?.resume()
            case .event: continue
            }
        }
    }

    /// Runs `event` and everything it leads to (a fetch answered at once) through the session.
    private func handle(_ event: InboxSession.Event, _ session: inout InboxSession?) async {
        var pending = [event]
        while !pending.isEmpty, session != nil {
            let actions = session!.handle(pending.removeFirst())
            for action in actions {
                do {
                    switch action {
                    case .fetch(let after, let limit):
                        pending.append(.fetched(try await store.fetch(for: accessoryID, after: after, limit: limit, now: now())))
                    case .send(let frame):
                        guard unwritten.withLock({ unwritten in
                            unwritten += 1
                            return unwritten <= maxUnwrittenFrames
                        }) else {
                            end(&session, .refused(RelayError(.protocolViolation, "the accessory does not read what the relay sends (\(maxUnwrittenFrames) frames wait)")))
                            break
                        }
                        continuation.yield(.frame(frame.encoded()))
                    case .forget(let upTo):
                        try await store.forget(for: accessoryID, upTo: upTo)
                    case .push(let id, let body):
                        pending.append(.pushCompleted(id: id, status: try await push(body)))
                    case .close(let error):
                        end(&session, .refused(error))
                    }
                } catch {
                    logger.error("relay store failed; closing the inbox", metadata: ["accessory": "\(accessoryID)", "error": "\(error)"])
                    end(&session, .goingAway("the relay could not read or update its store"))
                }
                if session == nil { break }
            }
        }
    }

    /// Pushes a reply when it is a push body (§10.6), the companion app registered where to, and
    /// the accessory has not used up its push rate; the relay pushes nothing else.
    private func push(_ body: [UInt8]) async throws -> RelayFrame.PushStatus {
        guard let pusher else { return .notConfigured }
        guard (try? AccessoryPush(jsonBody: body)) != nil else {
            gate.pass(accessoryID) {
                logger.notice("push refused: not an accessory push body", metadata: ["accessory": "\(accessoryID)", "bytes": "\(body.count)"])
            }
            return .refused
        }
        guard let target = try await store.pushTarget(of: accessoryID) else { return .noPushToken }
        guard pushes.allows(accessoryID) else {
            gate.pass(accessoryID) { logger.notice("push refused: over the accessory's push rate", metadata: ["accessory": "\(accessoryID)"]) }
            return .tryLater
        }
        let status = await pusher.push(body, to: target)
        if status == .delivered {
            logger.info("pushed", metadata: ["accessory": "\(accessoryID)"])
        } else {
            gate.pass(accessoryID) { logger.notice("push not delivered", metadata: ["accessory": "\(accessoryID)", "status": "\(status)"]) }
        }
        return status
    }

    private func end(_ session: inout InboxSession?, _ reason: Ending) {
        guard session != nil else { return }
        session = nil
        continuation.yield(.close(reason))
        continuation.finish()
    }
}

/// The open inbox connections of this relay instance, one per accessory: a post wakes its
/// accessory's connection, and a new connection of an accessory ends the one before (two would
/// send the same messages side by side).
final class InboxHub: Sendable {
    private let connections = Mutex<[String: InboxConnection]>([:])

    /// Makes `connection` its accessory's current one.
    func attach(_ connection: InboxConnection) {
        let previous = connections.withLock { $0.updateValue(connection, forKey: connection.accessoryID) }
        previous?.end(.goingAway("a newer connection of this accessory took over"))
    }

    /// An inbox of `accessoryID` opened on another relay instance sharing the store: the one
    /// here ends, as it would for a newer one here.
    func openedElsewhere(_ accessoryID: String) {
        let open = connections.withLock { $0.removeValue(forKey: accessoryID) }
        open?.end(.goingAway("a newer connection of this accessory took over, on another relay instance"))
    }

    func detach(_ connection: InboxConnection) {
        connections.withLock { connections in
            if connections[connection.accessoryID] === connection { connections[connection.accessoryID] = nil }
        }
    }

    /// A message was queued for `accessoryID`.
    func posted(for accessoryID: String) {
        connections.withLock { $0[accessoryID] }?.posted()
    }

    /// How many inboxes are open.
    var count: Int { connections.withLock { $0.count } }

    /// The inboxes open now.
    var open: [InboxConnection] { connections.withLock { Array($0.values) } }
}
