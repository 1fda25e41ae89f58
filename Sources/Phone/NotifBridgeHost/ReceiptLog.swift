import Synchronization

/// Receipts as they arrive on the connection's reader, with their times. Load runs read it
/// instead of the event mailbox, and `addNotification` waits on it for its own receipt.
public final class ReceiptLog: Sendable {
    public struct Entry: Sendable {
        public var at: ContinuousClock.Instant
        public var stored: Bool
        public var alerted: Bool
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var waiters: [UInt64: [CheckedContinuation<Entry?, Never>]] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    func record(_ sequence: UInt64, stored: Bool, alerted: Bool) {
        let entry = Entry(at: .now, stored: stored, alerted: alerted)
        let waiting = state.withLock { state in
            state.entries[sequence] = entry
            return state.waiters.removeValue(forKey: sequence) ?? []
        }
        for waiter in waiting { waiter.resume(returning: entry) }
    }

    /// Whether the link has ended: no receipt will come any more.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The link ended: nothing more will be recorded, so waiters give up.
    func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters.values.flatMap { $0 }
        }
        for waiter in waiting { waiter.resume(returning: nil) }
    }

    public func count() -> Int { state.withLock { $0.entries.count } }
    public func snapshot() -> [UInt64: Entry] { state.withLock { $0.entries } }

    /// The receipt for `sequence` once it arrives; nil if the link ends or the task is
    /// cancelled first.
    func receipt(for sequence: UInt64) async -> Entry? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Entry?? = state.withLock { state in
                    if let entry = state.entries[sequence] { return .some(entry) }
                    if state.closed || Task.isCancelled { return .some(nil) }
                    state.waiters[sequence, default: []].append(continuation)
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = state.withLock { $0.waiters.removeValue(forKey: sequence) ?? [] }
            for waiter in waiting { waiter.resume(returning: nil) }
        }
    }
}
