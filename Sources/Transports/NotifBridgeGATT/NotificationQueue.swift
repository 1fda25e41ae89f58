/// Notifications waiting for the peripheral's transmit queue: `updateValue` returns false
/// when it is full, and `peripheralManagerIsReady(toUpdateSubscribers:)` says when to try
/// again. Chunks go out in order, each exactly once.
public struct NotificationQueue: Sendable {
    private var chunks: [[UInt8]] = []
    private var head = 0

    public init() {}

    public var isEmpty: Bool { head == chunks.count }
    public var count: Int { chunks.count - head }

    public mutating func append(_ new: [[UInt8]]) {
        chunks += new
    }

    /// Sends chunks with `send` until it reports a full queue (false); what is left waits for
    /// the next call. Returns how many went.
    public mutating func drain(_ send: ([UInt8]) -> Bool) -> Int {
        var sent = 0
        while head < chunks.count, send(chunks[head]) {
            head += 1
            sent += 1
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        }
        return sent
    }

    public mutating func removeAll() {
        chunks.removeAll()
        head = 0
    }
}
