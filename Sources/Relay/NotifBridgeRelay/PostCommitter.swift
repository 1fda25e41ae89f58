import Foundation
import NotifBridgeRelayCore
import Synchronization

/// Group commit for posts: while one transaction is being written and fsynced, the posts that
/// arrive wait, and the next transaction takes all of them. An idle relay writes a post at
/// once; a busy one pays one fsync per batch instead of one per post. Each post is answered
/// only once its transaction is on disk.
final class PostCommitter: Sendable {
    private struct Waiting {
        var message: [UInt8]
        var accessoryID: String
        var continuation: CheckedContinuation<UInt64, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    /// The most posts one transaction takes: a burst is committed in slices of this size, so no
    /// post waits behind an unbounded transaction.
    static let maxBatch = 256

    private let store: any RelayStorage
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    init(store: any RelayStorage, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.now = now
    }

    /// The message's number once it is on disk; the admission's refusal otherwise.
    func post(_ message: [UInt8], to accessoryID: String) async throws -> UInt64 {
        try await withCheckedThrowingContinuation { continuation in
            let startsWriter = state.withLock { state in
                state.waiting.append(Waiting(message: message, accessoryID: accessoryID, continuation: continuation))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if startsWriter { Task { await self.drain() } }
        }
    }

    /// Writes batches until nothing waits.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let batch = Array(state.waiting.prefix(Self.maxBatch))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.writing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let results = try await store.postBatch(batch.map { ($0.message, $0.accessoryID) }, now: now())
                for (waiting, result) in zip(batch, results) { waiting.continuation.resume(with: result) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
