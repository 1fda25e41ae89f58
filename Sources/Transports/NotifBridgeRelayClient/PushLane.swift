import NotifBridgeRelayCore
import Synchronization

/// How a push handed to the relay went (docs/PROTOCOL.md §11.2).
public enum PushAnswer: Sendable, Equatable {
    /// The relay's `pushed` answer.
    case answered(RelayFrame.PushStatus)
    /// No inbox connection was open.
    case notConnected
    /// The connection ended before the relay answered.
    case connectionEnded
    /// The relay did not answer within this long; the push may still reach the iPhone.
    case unanswered(Duration)
    /// This many pushes already wait for their answers on the connection.
    case tooManyWaiting(Int)

    /// For the person who asked to send the reply.
    public var explanation: String {
        switch self {
        case .answered(let status): RelayFrame.explain(status)
        case .notConnected: "the relay inbox is not connected"
        case .connectionEnded: "the relay inbox connection ended before the relay answered; try again"
        case .unanswered(let wait): "the relay did not answer within \(wait.components.seconds) s (it may still push it)"
        case .tooManyWaiting(let count): "\(count) replies already wait for the relay's answer; try again later"
        }
    }
}

/// The accessory's pushes (docs/PROTOCOL.md §11.2) on its open inbox connection: each goes out as
/// a push frame with its own id, and waits for the relay's `pushed` answer, at most
/// ``answerTimeout``: a relay that answered pings but never a push left the reply, and whoever
/// asked for it, waiting for ever. The reply's ratchet index is used whatever the answer.
final class PushLane: Sendable {
    private struct Waiting {
        var continuation: CheckedContinuation<PushAnswer, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var send: AsyncStream<[UInt8]>.Continuation?
        var nextID: UInt64 = 1
        var waiting: [UInt64: Waiting] = [:]
        /// Pushes of the open connection that timed out; the relay may still answer them.
        var timedOut: Set<UInt64> = []
    }

    /// Pushes waiting for their answer on one connection: bounded so that a relay that never
    /// answers cannot make them pile up.
    static let maxWaiting = 16

    /// The relay's own APNs request gives up after 10 s.
    let answerTimeout: Duration
    private let state = Mutex(State())

    init(answerTimeout: Duration = .seconds(30)) {
        self.answerTimeout = answerTimeout
    }

    func push(_ body: [UInt8]) async -> PushAnswer {
        await withCheckedContinuation { continuation in
            let refusal = state.withLock { state -> PushAnswer? in
                guard let send = state.send else { return .notConnected }
                guard state.waiting.count < Self.maxWaiting else { return .tooManyWaiting(state.waiting.count) }
                let id = state.nextID
                state.nextID += 1
                state.waiting[id] = Waiting(continuation: continuation, timer: nil)
                send.yield(RelayFrame.push(id: id, body: body).encoded())
                let timeout = answerTimeout
                state.waiting[id]?.timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    self?.timeOut(id)
                }
                return nil
            }
            if let refusal { continuation.resume(returning: refusal) }
        }
    }

    /// How many pushes wait for their answers now.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// A connection opened: pushes go out through `send` from now on.
    func opened(_ send: AsyncStream<[UInt8]>.Continuation) {
        state.withLock { $0.send = send }
    }

    /// The relay answered push `id`; false if this connection sent no push of that id (a relay
    /// breaking §11.2). An answer after the timeout is normal, not a breach: the relay answers
    /// pushes one at a time, each after up to 10 s with APNs.
    func answered(_ id: UInt64, _ status: RelayFrame.PushStatus) -> Bool {
        if finish(id, .answered(status)) { return true }
        return state.withLock { $0.timedOut.remove(id) != nil }
    }

    /// The connection ended: waiting pushes get no answer.
    func closed() {
        let waiting = state.withLock { state in
            state.send?.finish()
            state.send = nil
            state.timedOut.removeAll()
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiting {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .connectionEnded)
        }
    }

    private func timeOut(_ id: UInt64) {
        let waiter = state.withLock { state in
            state.waiting.removeValue(forKey: id).map { waiter in
                state.timedOut.insert(id)
                return waiter
            }
        }
        waiter?.continuation.resume(returning: .unanswered(answerTimeout))
    }

    private func finish(_ id: UInt64, _ answer: PushAnswer) -> Bool {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return false }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: answer)
        return true
    }
}
