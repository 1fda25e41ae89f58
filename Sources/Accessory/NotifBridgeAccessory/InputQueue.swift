import Synchronization

/// A single-consumer queue whose consumer takes everything that has arrived at once, so a
/// connection can handle a run of messages together (one store commit for all of them).
/// `pushWhenRoom` waits while `capacity` items are queued: the link's reader stops reading,
/// and the transport pushes back on the peer, instead of the backlog growing in memory.
final class InputQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiter: CheckedContinuation<[Element], Never>?
        /// The one producer waiting for room (the link's reader).
        var roomWaiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    /// Queues `element` once fewer than `capacity` items wait; returns at once if the queue
    /// finished or the task is cancelled meanwhile (the element is then dropped).
    func pushWhenRoom(_ element: Element) async {
        // Room now (the usual case): no continuation, no cancellation handler.
        let queued = state.withLock { state -> Bool in
            guard state.items.count < capacity || state.finished else { return false }
            Self.append(element, to: &state)
            return true
        }
        if queued { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLock { state in
                    if state.finished || Task.isCancelled || state.items.count < capacity {
                        continuation.resume()
                    } else {
                        state.roomWaiter = continuation
                    }
                }
            }
        } onCancel: {
            state.withLock { state in
                state.roomWaiter?.resume()
                state.roomWaiter = nil
            }
        }
        guard !Task.isCancelled else { return }
        push(element)
    }

    func push(_ element: Element) {
        state.withLock { Self.append(element, to: &$0) }
    }

    private static func append(_ element: Element, to state: inout State) {
        guard !state.finished else { return }
        if let waiter = state.waiter {
            state.waiter = nil
            waiter.resume(returning: [element])
        } else {
            state.items.append(element)
        }
    }

    func finish() {
        state.withLock { state in
            state.finished = true
            state.waiter?.resume(returning: [])
            state.waiter = nil
            state.roomWaiter?.resume()
            state.roomWaiter = nil
        }
    }

    /// Waits for at least one element, then returns all that are queued; empty once finished.
    func takeAll() async -> [Element] {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if !state.items.isEmpty {
                    continuation.resume(returning: state.items)
                    state.items.removeAll(keepingCapacity: true)
                    state.roomWaiter?.resume()
                    state.roomWaiter = nil
                } else if state.finished {
                    continuation.resume(returning: [])
                } else {
                    state.waiter = continuation
                }
            }
        }
    }

    /// Everything queued now, without waiting; empty if nothing is.
    func takeAvailable() -> [Element] {
        state.withLock { state in
            defer {
                state.items.removeAll(keepingCapacity: true)
                state.roomWaiter?.resume()
                state.roomWaiter = nil
            }
            return state.items
        }
    }

    /// What was queued but never taken (to answer pending requests when a connection ends).
    func drain() -> [Element] {
        state.withLock { state in
            defer { state.items.removeAll() }
            return state.items
        }
    }
}
