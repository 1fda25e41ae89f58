/// One accessory's inbox connection, on the relay's side: which queued messages to send next, how
/// many may be in flight, and what an acknowledgement lets the relay forget. No IO: events in,
/// actions out; the relay's store and WebSocket carry them out (docs/PROTOCOL.md §11).
///
/// Messages go out in the order the relay numbered them, at most `window` unacknowledged. An ack
/// is cumulative: the accessory has stored everything up to that number, so the relay deletes it.
/// What is not acknowledged when the connection ends stays queued and is sent again on the next
/// one; the accessory's ratchet refuses a second copy of a message it stored (§10.4), and
/// acknowledges it all the same.
public struct InboxSession: Sendable {
    public enum Event: Sendable {
        /// The connection is authenticated and open.
        case opened
        /// A new message was queued for this accessory (by this relay instance or another).
        case posted
        /// What the store returned for the last `.fetch`, ascending by number; fewer than asked
        /// means the queue has no more for now.
        case fetched([(seq: UInt64, message: [UInt8])])
        /// A frame from the accessory.
        case received([UInt8])
        /// The push the accessory asked for went as `status` says.
        case pushCompleted(id: UInt64, status: RelayFrame.PushStatus)
    }

    public enum Action: Sendable, Hashable {
        /// Read up to `limit` queued, unexpired messages numbered above `after`, ascending.
        case fetch(after: UInt64, limit: Int)
        case send(RelayFrame)
        /// Delete the accessory's messages numbered up to `upTo`: it has stored them.
        case forget(upTo: UInt64)
        /// Push `body` through APNs to the accessory's registered push token, then report
        /// `.pushCompleted`.
        case push(id: UInt64, body: [UInt8])
        /// End the connection; the reason goes to the log (no content: numbers and codes only).
        case close(RelayError)
    }

    public let limits: RelayLimits
    /// The highest number sent on this connection (0: none yet).
    public private(set) var lastSent: UInt64 = 0
    /// The highest number acknowledged on this connection (0: none yet).
    public private(set) var lastAcked: UInt64 = 0
    /// Numbers sent and not yet acknowledged, ascending.
    public private(set) var inFlight: [UInt64] = []
    /// The limit of the fetch under way, if one is.
    private var fetching: Int?
    /// A post or an ack seen while a fetch was under way: the fetch may have missed a message, or
    /// there is room for more than it asked for, so fetch again once it returns.
    private var fetchAgain = false
    private var closed = false

    public init(limits: RelayLimits = RelayLimits()) {
        self.limits = limits
    }

    private var room: Int { limits.window - inFlight.count }

    public mutating func handle(_ event: Event) -> [Action] {
        guard !closed else { return [] }
        switch event {
        case .opened, .posted:
            if fetching != nil { fetchAgain = true }
            return fetchIfRoom()
        case .fetched(let messages):
            // As many as asked for: the queue may hold more.
            fetchAgain = fetchAgain || messages.count == fetching
            fetching = nil
            var actions: [Action] = []
            for (seq, message) in messages {
                guard seq > lastSent, inFlight.count < limits.window else {
                    return close(RelayError(.protocolViolation, "the store returned message \(seq) after \(lastSent), or more than the window"))
                }
                lastSent = seq
                inFlight.append(seq)
                actions.append(.send(.deliver(seq: seq, message: message)))
            }
            if fetchAgain {
                fetchAgain = false
                actions += fetchIfRoom()
            }
            return actions
        case .received(let bytes):
            let frame: RelayFrame
            do {
                frame = try RelayFrame(decoding: bytes, limits: limits)
            } catch {
                return close(error)
            }
            if case .push(let id, let body) = frame { return [.push(id: id, body: body)] }
            guard case .ack(let seq) = frame else {
                return close(RelayError(.protocolViolation, "an accessory sends only acks and pushes"))
            }
            guard seq <= lastSent else {
                return close(RelayError(.protocolViolation, "ack of message \(seq), but only up to \(lastSent) was sent"))
            }
            // An ack at or below the last one repeats what is known: nothing to do.
            guard seq > lastAcked else { return [] }
            lastAcked = seq
            inFlight.removeAll { $0 <= seq }
            if fetching != nil { fetchAgain = true }
            return [.forget(upTo: seq)] + fetchIfRoom()
        case .pushCompleted(let id, let status):
            return [.send(.pushed(id: id, status: status))]
        }
    }

    private mutating func fetchIfRoom() -> [Action] {
        guard fetching == nil, room > 0 else { return [] }
        fetching = room
        return [.fetch(after: lastSent, limit: room)]
    }

    private mutating func close(_ error: RelayError) -> [Action] {
        closed = true
        return [.close(error)]
    }
}
