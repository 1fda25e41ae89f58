import NotifBridgeWire

/// Orders every event the accessory applies: first by key exchange (`epoch`, assigned by the
/// store in the order exchanges completed), then by the host's sequence number.
public struct Revision: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var epoch: Int64
    public var sequence: UInt64

    public init(epoch: Int64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
    }

    public static func < (lhs: Revision, rhs: Revision) -> Bool {
        (lhs.epoch, lhs.sequence) < (rhs.epoch, rhs.sequence)
    }

    public var description: String { "\(epoch).\(sequence)" }
}

/// What the store knows about one notification identifier when an event for it arrives.
/// Whether it alerted is no ledger fact: the planner decides that (``AlertPlanner``).
public struct LedgerState: Hashable, Sendable {
    public var revision: Revision
    public var removed: Bool

    public init(revision: Revision, removed: Bool) {
        self.revision = revision
        self.removed = removed
    }
}

/// What to do with one add, update or remove. The store carries it out in one transaction.
public enum LedgerDecision: Hashable, Sendable {
    /// Store a new record (or a re-posted one after a removal); ``AlertPlanner`` decides
    /// whether it alerts.
    case insert
    /// Replace the content and keep the alerted state: updates never alert again.
    case replace
    /// Mark the record removed (inserting a tombstone if it was never seen); for a remove-all,
    /// raise the watermark and mark every older record removed.
    case markRemoved
    /// Change nothing.
    case ignore(IgnoreReason)

    public enum IgnoreReason: String, Hashable, Sendable {
        /// Same or older revision than what is stored: a replay or a late copy.
        case stale
        /// An update for a removed notification: updates never resurrect.
        case removed
        /// Older than a remove-all that already happened.
        case beforeRemoveAll
    }
}

/// The rules that make replays, reorders and reconnects harmless (docs/PROTOCOL.md §6.3).
public enum NotificationLedger {
    public enum Operation: Sendable {
        case add
        case update
        case remove
        case removeAll
    }

    public static func decide(
        _ operation: Operation,
        at revision: Revision,
        existing: LedgerState?,
        removeAllWatermark: Revision?
    ) -> LedgerDecision {
        if let watermark = removeAllWatermark, revision <= watermark {
            return .ignore(.beforeRemoveAll)
        }
        // A remove-all concerns no one record: only the watermark orders it.
        if case .removeAll = operation { return .markRemoved }
        guard let existing else {
            switch operation {
            // An update whose add was missed is still worth showing (the planner keeps it quiet).
            case .add, .update: return .insert
            // A tombstone, so that a late add of this identifier cannot resurrect it.
            case .remove, .removeAll: return .markRemoved
            }
        }
        guard revision > existing.revision else { return .ignore(.stale) }
        switch operation {
        case .add:
            // A newer add after a removal is a genuinely new posting of the same identifier.
            return existing.removed ? .insert : .replace
        case .update:
            return existing.removed ? .ignore(.removed) : .replace
        case .remove, .removeAll:
            return .markRemoved
        }
    }
}
