import NIOCore
import Synchronization

/// What the simulated iPhone learns from the accessory, in arrival order.
public enum HostClientEvent: Sendable {
    case established(exchangeID: UInt64, suite: String, resumed: Bool)
    case receipt(sequence: UInt64, stored: Bool, alerted: Bool)
    /// A notification response (action or text reply), as iOS would hand it to the system.
    case response(source: String, id: String, action: String, text: String?)
    /// The accessory asks to clear these on the phone (session.removeNotifications).
    case removeOnPhone([(source: String, id: String)])
    case resync(reason: String)
    case peerError(code: String, detail: String)
    /// An event the accessory could never accept was not sent.
    case notSent(reason: String)
    case closed(reason: String)
}

public struct HostTimeout: Error, CustomStringConvertible {
    public var waitingFor: String
    public var description: String { "timed out waiting for \(waitingFor)" }
}

/// A single-consumer queue of events with an awaitable `next`. A ring buffer: a large
/// `phone forward --file` reads its receipts only after sending everything, and taking each
/// from the front of an array moved all the others.
///
/// Elements posted as `limited` (what a peer sends of its own accord, as many as it likes)
/// may wait unread up to a limit at once; the others are bounded by their cause (a receipt
/// answers an event this side sent).
final class EventMailbox<Element: Sendable>: Sendable {
    private struct State {
        var buffer = CircularBuffer<(element: Element, limited: Bool)>()
        var limitedWaiting = 0
        var limit: Int
        /// The highest number `makeRoom(forAnswerTo:)` has made room for (0: none yet).
        var answerable: UInt64 = 0
        var waiter: CheckedContinuation<Element?, Never>?
        var finished = false
    }

    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(limit: limit))
    }

    /// Room for one more limited element for each numbered message this side sends, which a
    /// peer may answer with one (a LinkError for an event it could not store). Once per number:
    /// a message sent again (after each re-key) makes no more room.
    func makeRoom(forAnswerTo number: UInt64) {
        state.withLock { state in
            if state.answerable == 0 {
                // The link's first: numbers before it were sent on earlier links.
                state.limit += 1
            } else if number > state.answerable {
                state.limit += Int(clamping: number - state.answerable)
            } else {
                return
            }
            state.answerable = number
        }
    }

    /// Queues `element`, or hands it to the waiting consumer. Returns false, queueing nothing,
    /// when it is `limited` and `limit` such elements already wait.
    @discardableResult
    func post(_ element: Element, limited: Bool = false) -> Bool {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(returning: element)
                return true
            }
            if limited {
                guard state.limitedWaiting < state.limit else { return false }
                state.limitedWaiting += 1
            }
            state.buffer.append((element, limited))
            return true
        }
    }

    func finish() {
        state.withLock { state in
            state.finished = true
            state.waiter?.resume(returning: nil)
            state.waiter = nil
        }
    }

    /// The next element, or nil once finished (or when the waiting task is cancelled).
    func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    if let first = state.buffer.popFirst() {
                        if first.limited { state.limitedWaiting -= 1 }
                        continuation.resume(returning: first.element)
                    } else if state.finished || Task.isCancelled {
                        continuation.resume(returning: nil)
                    } else {
                        state.waiter = continuation
                    }
                }
            }
        } onCancel: {
            state.withLock { state in
                state.waiter?.resume(returning: nil)
                state.waiter = nil
            }
        }
    }

    func next(timeout: Duration, waitingFor: String) async throws -> Element? {
        try await withThrowingTaskGroup(of: Element?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw HostTimeout(waitingFor: waitingFor)
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }
}
