import AccessoryNotifications
import AccessoryTransportExtension
import Foundation
import struct NotifBridgeHostCore.NotificationsForwarder
import enum NotifBridgeHostCore.HostOperation
import Synchronization

/// The data provider's one ordered queue. A single task takes the calls in the order they were
/// made and runs each to its end: numbered and serialised by `NotificationsForwarder`, the
/// number kept before the message goes, then `session.send(message:)`.
final class ForwardingQueue: Sendable {
    /// One call. `AccessoryNotification` is not documented as Sendable; each value is handed
    /// over once, to the queue's task, and not touched by the caller afterwards.
    enum Work: @unchecked Sendable {
        case activate(NotificationsForwarding.Session)
        case invalidate
        case add(AccessoryNotification, AlertingContext, reply: @Sendable (UInt64?) -> Void)
        case update(AccessoryNotification)
        case operation(HostOperation)
        case message(Data)
    }

    /// How long an add waits for the accessory's receipt. The system's coordination timeout is
    /// undocumented; this stays well inside any plausible one, and a late receipt is ignored.
    static let receiptWait = Duration.seconds(4)

    private let work: AsyncStream<Work>.Continuation
    private let receipts = ReceiptWaiters()

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Work.self)
        work = continuation
        let receipts = receipts
        Task { await Self.run(stream, receipts: receipts) }
    }

    func submit(_ item: Work) {
        work.yield(item)
    }

    func add(_ notification: AccessoryNotification, _ alerting: AlertingContext) async throws -> Bool {
        let sequence = await withCheckedContinuation { continuation in
            work.yield(.add(notification, alerting, reply: { continuation.resume(returning: $0) }))
        }
        guard let sequence else { return false }
        return await receipts.wait(for: sequence, timeout: Self.receiptWait)
    }

    private static func run(_ stream: AsyncStream<Work>, receipts: ReceiptWaiters) async {
        var state = ForwardingState()
        for await item in stream {
            await state.handle(item, receipts: receipts)
        }
    }
}

/// Adds waiting for their receipts, by sequence number. A receipt can come before its add has
/// started waiting (the queue moves on once the message is sent), so the last few receipts
/// nobody waited for are kept.
final class ReceiptWaiters: Sendable {
    private struct State {
        var waiting: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var early: [(sequence: UInt64, alerted: Bool)] = []
    }

    /// Receipts kept for a waiter still to come: updates and removals have receipts too, and
    /// nobody waits for theirs.
    static let keptReceipts = 64

    private let state = Mutex(State())

    func wait(for sequence: UInt64, timeout: Duration) async -> Bool {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resolve(sequence, alerted: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let early: Bool? = state.withLock { state in
                if let index = state.early.firstIndex(where: { $0.sequence == sequence }) {
                    return state.early.remove(at: index).alerted
                }
                state.waiting[sequence] = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    func resolve(_ sequence: UInt64, alerted: Bool) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiting.removeValue(forKey: sequence) else {
                state.early.append((sequence, alerted))
                if state.early.count > Self.keptReceipts { state.early.removeFirst() }
                return CheckedContinuation<Bool, Never>?.none
            }
            return waiter
        }
        waiter?.resume(returning: alerted)
    }
}
