import Foundation
import Logging
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import Synchronization

/// One accessory's open inbox: carries out ``InboxSession``'s actions against the store and
/// hands the frames to send, in order, to the connection's writer.
///
/// Events arrive from two places, the WebSocket's reader (the accessory's acks) and the hub (a
/// post for this accessory), and are handled one at a time under one lock, so the frames leave
/// in the order the session chose them. The store calls inside the lock are short SQLite reads
/// and one fsynced delete per ack. What waits for the writer is bounded by the session's window.
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
    }

    let accessoryID: String
    let output: AsyncStream<Output>
    private let continuation: AsyncStream<Output>.Continuation
    private let store: RelayStore
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let session: Mutex<InboxSession?>

    init(accessoryID: String, store: RelayStore, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.accessoryID = accessoryID
        self.store = store
        self.logger = logger
        self.now = now
        session = Mutex(InboxSession(limits: store.limits))
        (output, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Runs `event` and everything it leads to (a fetch answered at once) through the session.
    func handle(_ event: InboxSession.Event) {
        session.withLock { session in
            var pending = [event]
            while !pending.isEmpty, session != nil {
                let actions = session!.handle(pending.removeFirst())
                for action in actions {
                    do {
                        switch action {
                        case .fetch(let after, let limit):
                            pending.append(.fetched(try store.fetch(for: accessoryID, after: after, limit: limit, now: now())))
                        case .send(let frame):
                            continuation.yield(.frame(frame.encoded()))
                        case .forget(let upTo):
                            try store.forget(for: accessoryID, upTo: upTo)
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
    }

    /// Ends the connection from outside: a newer connection of the same accessory took over.
    func end(_ reason: Ending) {
        session.withLock { end(&$0, reason) }
    }

    /// The WebSocket closed: nothing more is sent.
    func finished() {
        session.withLock { session in
            session = nil
            continuation.finish()
        }
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

    func detach(_ connection: InboxConnection) {
        connections.withLock { connections in
            if connections[connection.accessoryID] === connection { connections[connection.accessoryID] = nil }
        }
    }

    /// A message was queued for `accessoryID`.
    func posted(for accessoryID: String) {
        connections.withLock { $0[accessoryID] }?.handle(.posted)
    }

    /// How many inboxes are open.
    var count: Int { connections.withLock { $0.count } }
}
