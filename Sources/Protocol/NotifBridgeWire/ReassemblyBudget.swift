import Synchronization

/// Bytes that all of an accessory's links together may reserve for partial messages. Each
/// reassembler still has its own limits (`WireLimits.maxBufferedBytes`); this one bounds the
/// sum, so a thousand connections each opening their four largest messages cannot take the
/// accessory's memory. Shared by reference between reassemblers; no IO.
public final class ReassemblyBudget: Sendable {
    public let capacity: Int
    private let reserved = Atomic<Int>(0)

    /// 8 MiB: sixteen links each holding their full per-link reservation.
    public static let defaultCapacity = 8 * 1024 * 1024

    public init(capacity: Int = ReassemblyBudget.defaultCapacity) {
        self.capacity = capacity
    }

    /// Bytes reserved now, across every link.
    public var reservedBytes: Int { reserved.load(ordering: .relaxed) }

    /// Reserves `bytes` if they fit; false leaves the budget unchanged.
    public func reserve(_ bytes: Int) -> Bool {
        var current = reserved.load(ordering: .relaxed)
        while current + bytes <= capacity {
            let (exchanged, original) = reserved.compareExchange(expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    public func release(_ bytes: Int) {
        reserved.subtract(bytes, ordering: .acquiringAndReleasing)
    }
}
