import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// The accessory's key and the exchange it holds. Every connection starts its session from a
/// snapshot; a completed exchange or a rotated key replaces them for the connections after it.
final class KeyRing: Sendable {
    private struct Keys {
        var identity: AccessoryPrivateKey
        var exchange: KeyExchangeParameters?
        var watchers: [UUID: AsyncStream<Void>.Continuation] = [:]
    }

    let store: any AccessoryKeyStore
    private let keys: Mutex<Keys>

    init(store: any AccessoryKeyStore, identity: AccessoryPrivateKey, exchange: KeyExchangeParameters?) {
        self.store = store
        keys = Mutex(Keys(identity: identity, exchange: exchange))
    }

    var identity: AccessoryPrivateKey { keys.withLock { $0.identity } }
    var snapshot: (identity: AccessoryPrivateKey, exchange: KeyExchangeParameters?) {
        keys.withLock { ($0.identity, $0.exchange) }
    }

    /// Holds a completed exchange, which `persist` saves under the key it was made with; then
    /// tells those waiting on ``exchangeChanges()``, once what they would read is on disk.
    func hold(_ exchange: KeyExchangeParameters, persist: ([UInt8]) throws -> Void) rethrows {
        let keyID = keys.withLock { keys in
            keys.exchange = exchange
            return keys.identity.keyID
        }
        defer { announceChange() }
        try persist(keyID)
    }

    func forget(_ exchangeID: UInt64) {
        keys.withLock { if $0.exchange?.exchangeID == exchangeID { $0.exchange = nil } }
        announceChange()
    }

    /// Yields once for each change of the held exchange after this call (a burst of them may
    /// come as one). The relay inbox is open only while the held exchange has internet ratchets.
    func exchangeChanges() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        keys.withLock { $0.watchers[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.keys.withLock { _ = $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    private func announceChange() {
        for watcher in keys.withLock({ Array($0.watchers.values) }) { watcher.yield() }
    }

    /// Keeps the new key (a 0600 file, the Keychain) before later connections offer it.
    func replace(with key: AccessoryPrivateKey) throws {
        try store.save(key)
        keys.withLock { $0.identity = key }
    }
}

/// Open connections, so that the control service can reach the iPhone: a reply goes to the newest
/// connection that has completed its key exchange.
final class ConnectionRegistry: Sendable {
    private struct Entry {
        var connectedAt: ContinuousClock.Instant
        var inputs: InputQueue<LinkInput>
        var established = false
    }

    private struct Entries {
        var open: [UUID: Entry] = [:]
        var closing = false
    }

    private let entries = Mutex(Entries())

    /// Registers a connection; false once the daemon is shutting down (the caller closes it).
    func add(_ id: UUID, inputs: InputQueue<LinkInput>) -> Bool {
        entries.withLock { entries in
            guard !entries.closing else { return false }
            entries.open[id] = Entry(connectedAt: .now, inputs: inputs)
            return true
        }
    }

    /// Refuses new connections from now on and asks every open one to finish what it has read
    /// (commit it, send its receipts) and close.
    func closeAll() {
        let queues = entries.withLock { entries in
            entries.closing = true
            return entries.open.values.map(\.inputs)
        }
        for queue in queues { queue.push(.shutdown) }
    }

    var isEmpty: Bool { entries.withLock { $0.open.isEmpty } }

    func setEstablished(_ id: UUID, _ established: Bool) {
        entries.withLock { $0.open[id]?.established = established }
    }

    func remove(_ id: UUID) {
        entries.withLock { _ = $0.open.removeValue(forKey: id) }
    }

    /// The input queue of the newest established connection, if any.
    func newestEstablished() -> InputQueue<LinkInput>? {
        entries.withLock { entries in
            entries.open.values.filter(\.established).max { $0.connectedAt < $1.connectedAt }?.inputs
        }
    }
}

/// Inputs of one connection's loop: chunks, a once-a-second tick, and sealed messages the
/// control service asks to send.
enum LinkInput: Sendable {
    case inbound(LinkInbound)
    /// When it was queued: a deadline is judged by it, so a Hello that arrived in time but
    /// was taken after the tick (in the same batch, behind a slow commit) is not late.
    case tick(ContinuousClock.Instant)
    case send(AccessoryEvent.OneOf_Event, reply: SendReply)
    /// The daemon is stopping: finish what came before, then close.
    case shutdown
}

/// Completes a control request waiting for its message to be sent (or refused).
final class SendReply: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<Void, SendFailure>, Never>?>

    init(_ continuation: CheckedContinuation<Result<Void, SendFailure>, Never>) {
        self.continuation = Mutex(continuation)
    }

    func finish(_ result: Result<Void, SendFailure>) {
        continuation.withLock { $0?.resume(returning: result); $0 = nil }
    }

    /// A request dropped unanswered (its connection closed first) still gets an answer.
    deinit {
        finish(.failure("the iPhone disconnected before the message was sent"))
    }
}

struct SendFailure: Error, ExpressibleByStringLiteral, CustomStringConvertible {
    var description: String
    init(stringLiteral value: String) { description = value }
    init(_ description: String) { self.description = description }
}
