/// Rebuilds messages from chunks, enforcing `WireLimits` before any payload is buffered.
///
/// One reassembler serves a link direction, whatever carries the chunks (GATT or TCP). Time is an
/// input (`now`), so the timeout is testable and the type does no IO. A refused chunk throws a
/// `WireError` and drops at most the message it belonged to; other partial messages survive.
/// With a shared `ReassemblyBudget`, a partial message also reserves its declared length there;
/// the owner calls `reset()` when the link ends, which gives the reservation back.
public struct ChunkReassembler: Sendable {
    private struct Partial: Sendable {
        var bytes: [UInt8]
        var expected: Int
        var lastActivity: ContinuousClock.Instant
    }

    public let limits: WireLimits
    private let budget: ReassemblyBudget?
    private var partials: [UInt8: Partial] = [:]
    private var reservedBytes = 0

    public init(limits: WireLimits = .default, budget: ReassemblyBudget? = nil) {
        self.limits = limits
        self.budget = budget
    }

    /// Messages currently partly received.
    public var partialMessageCount: Int { partials.count }
    /// Bytes reserved for partial messages (their declared lengths).
    public var bufferedByteCount: Int { reservedBytes }
    /// Partial messages abandoned because their id started over.
    public private(set) var interruptedMessageCount = 0

    /// Takes one chunk; returns the message it completes, or nil while the message is partial.
    public mutating func receive(
        _ chunk: some RandomAccessCollection<UInt8>,
        now: ContinuousClock.Instant
    ) throws(WireError) -> [UInt8]? {
        expire(now: now)
        guard chunk.count <= limits.maxChunkLength else {
            throw WireError(.tooLarge, "chunk of \(chunk.count) bytes exceeds maxChunkLength \(limits.maxChunkLength)")
        }
        let (header, payloadOffset) = try ChunkHeader.parse(chunk)
        let payload = chunk.dropFirst(payloadOffset)
        let id = header.messageID

        if header.flags.contains(.first) {
            // A sender that restarts an id has abandoned the earlier message; the new one stands.
            if drop(id) { interruptedMessageCount += 1 }
            if header.flags.contains(.last) {
                try checkMessageLength(payload.count)
                return Array(payload)
            }
            let total = Int(header.totalLength ?? 0)
            try checkMessageLength(total)
            guard total > payload.count else {
                throw WireError(.lengthMismatch, "message \(id) declares \(total) bytes but its first chunk already holds \(payload.count) without LAST")
            }
            guard partials.count < limits.maxPartialMessages else {
                throw WireError(.tooManyPartialMessages, "message \(id) would be partial message \(partials.count + 1); maxPartialMessages is \(limits.maxPartialMessages)")
            }
            guard reservedBytes + total <= limits.maxBufferedBytes else {
                throw WireError(.tooManyPartialMessages, "message \(id) of \(total) bytes would reserve \(reservedBytes + total); maxBufferedBytes is \(limits.maxBufferedBytes)")
            }
            if let budget, !budget.reserve(total) {
                throw WireError(.tooManyPartialMessages, "message \(id) of \(total) bytes does not fit the \(budget.capacity) bytes all links may reserve together")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(total)
            bytes.append(contentsOf: payload)
            partials[id] = Partial(bytes: bytes, expected: total, lastActivity: now)
            reservedBytes += total
            return nil
        }

        guard var partial = partials[id] else {
            throw WireError(.unknownMessageID, "continuation chunk for message \(id), which has no first chunk in flight")
        }
        let received = partial.bytes.count + payload.count
        let isLast = header.flags.contains(.last)
        guard isLast ? received == partial.expected : received < partial.expected else {
            drop(id)
            throw WireError(.lengthMismatch, "message \(id) declared \(partial.expected) bytes; chunks \(isLast ? "ended" : "reached") at \(received)")
        }
        if isLast {
            partial.bytes.append(contentsOf: payload)
            drop(id)
            return partial.bytes
        }
        partials[id] = nil  // keep the array uniquely referenced while appending
        partial.bytes.append(contentsOf: payload)
        partial.lastActivity = now
        partials[id] = partial
        return nil
    }

    /// Drops partial messages idle for longer than the timeout; returns their message ids.
    @discardableResult
    public mutating func expire(now: ContinuousClock.Instant) -> [UInt8] {
        let stale = partials.filter { now - $0.value.lastActivity > limits.partialMessageTimeout }.map(\.key)
        for id in stale { drop(id) }
        return stale.sorted()
    }

    /// Drops everything in flight, e.g. when the link disconnects.
    public mutating func reset() {
        partials.removeAll()
        budget?.release(reservedBytes)
        reservedBytes = 0
    }

    @discardableResult
    private mutating func drop(_ id: UInt8) -> Bool {
        guard let partial = partials.removeValue(forKey: id) else { return false }
        reservedBytes -= partial.expected
        budget?.release(partial.expected)
        return true
    }

    private func checkMessageLength(_ length: Int) throws(WireError) {
        guard length <= limits.maxMessageLength else {
            throw WireError(.tooLarge, "message of \(length) bytes exceeds maxMessageLength \(limits.maxMessageLength)")
        }
    }
}
