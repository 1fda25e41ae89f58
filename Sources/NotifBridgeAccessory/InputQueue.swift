import Synchronization

/// A single-consumer queue whose consumer takes everything that has arrived at once, so a
/// connection can handle a run of messages together (one store commit for all of them).
final class InputQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiter: CheckedContinuation<[Element], Never>?
        var finished = false
    }

    private let state = Mutex(State())

    func push(_ element: Element) {
        state.withLock { state in
            guard !state.finished else { return }
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(returning: [element])
            } else {
                state.items.append(element)
            }
        }
    }

    func finish() {
        state.withLock { state in
            state.finished = true
            state.waiter?.resume(returning: [])
            state.waiter = nil
        }
    }

    /// Waits for at least one element, then returns all that are queued; empty once finished.
    func takeAll() async -> [Element] {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if !state.items.isEmpty {
                    continuation.resume(returning: state.items)
                    state.items.removeAll(keepingCapacity: true)
                } else if state.finished {
                    continuation.resume(returning: [])
                } else {
                    state.waiter = continuation
                }
            }
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
