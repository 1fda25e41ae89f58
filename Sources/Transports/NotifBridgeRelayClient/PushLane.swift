import NotifBridgeRelayCore
import Synchronization

/// The accessory's pushes (docs/PROTOCOL.md §11.2) on its open inbox connection: each goes out as
/// a push frame with its own id, and waits for the relay's `pushed` answer. With no connection,
/// or when the connection ends first, a push gets no answer (nil): the caller decides whether
/// to try again; the reply's ratchet index is used either way.
final class PushLane: Sendable {
    private struct State {
        var send: AsyncStream<[UInt8]>.Continuation?
        var nextID: UInt64 = 1
        var waiting: [UInt64: CheckedContinuation<RelayFrame.PushStatus?, Never>] = [:]
    }

    /// Pushes waiting for their answer on one connection: bounded so that a relay that never
    /// answers cannot make them pile up.
    static let maxWaiting = 16

    private let state = Mutex(State())

    func push(_ body: [UInt8]) async -> RelayFrame.PushStatus? {
        await withCheckedContinuation { continuation in
            let sent = state.withLock { state -> Bool in
                guard let send = state.send, state.waiting.count < Self.maxWaiting else { return false }
                let id = state.nextID
                state.nextID += 1
                state.waiting[id] = continuation
                send.yield(RelayFrame.push(id: id, body: body).encoded())
                return true
            }
            if !sent { continuation.resume(returning: nil) }
        }
    }

    /// A connection opened: pushes go out through `send` from now on.
    func opened(_ send: AsyncStream<[UInt8]>.Continuation) {
        state.withLock { $0.send = send }
    }

    /// The relay answered push `id`; false if no push of that id waits (a relay breaking §11.2).
    func answered(_ id: UInt64, _ status: RelayFrame.PushStatus) -> Bool {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return false }
        waiter.resume(returning: status)
        return true
    }

    /// The connection ended: waiting pushes get no answer.
    func closed() {
        let waiting = state.withLock { state in
            state.send?.finish()
            state.send = nil
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.resume(returning: nil) }
    }
}
