import NotifBridgeAccessoryCore
import Testing

@Suite("Notification ledger rules")
struct LedgerTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var operation: NotificationLedger.Operation
        var at: Revision
        var existing: LedgerState?
        var watermark: Revision?
        var expected: LedgerDecision
        var testDescription: String { name }
    }

    static func r(_ epoch: Int64, _ sequence: UInt64) -> Revision { Revision(epoch: epoch, sequence: sequence) }
    static func live(_ epoch: Int64, _ sequence: UInt64) -> LedgerState { LedgerState(revision: r(epoch, sequence), removed: false) }
    static func gone(_ epoch: Int64, _ sequence: UInt64) -> LedgerState { LedgerState(revision: r(epoch, sequence), removed: true) }

    static let cases: [Case] = [
        Case(name: "new add that should alert", operation: .add, at: r(1, 1), existing: nil, watermark: nil, expected: .insert),
        Case(name: "new add that should not alert", operation: .add, at: r(1, 1), existing: nil, watermark: nil, expected: .insert),
        Case(name: "replayed add (same revision)", operation: .add, at: r(1, 5), existing: live(1, 5), watermark: nil, expected: .ignore(.stale)),
        Case(name: "late add (older revision)", operation: .add, at: r(1, 4), existing: live(1, 5), watermark: nil, expected: .ignore(.stale)),
        Case(name: "newer add of a live notification replaces without alerting", operation: .add, at: r(1, 6), existing: live(1, 5), watermark: nil, expected: .replace),
        Case(name: "newer add after removal is a new posting", operation: .add, at: r(1, 7), existing: gone(1, 6), watermark: nil, expected: .insert),
        Case(name: "late add after removal never resurrects", operation: .add, at: r(1, 5), existing: gone(1, 6), watermark: nil, expected: .ignore(.stale)),
        Case(name: "add from an older exchange after removal", operation: .add, at: r(1, 99), existing: gone(2, 1), watermark: nil, expected: .ignore(.stale)),
        Case(name: "add in a newer exchange outranks any older sequence", operation: .add, at: r(2, 1), existing: live(1, 99), watermark: nil, expected: .replace),
        Case(name: "update of a live notification", operation: .update, at: r(1, 6), existing: live(1, 5), watermark: nil, expected: .replace),
        Case(name: "stale update", operation: .update, at: r(1, 5), existing: live(1, 5), watermark: nil, expected: .ignore(.stale)),
        Case(name: "update never resurrects a removed notification", operation: .update, at: r(1, 8), existing: gone(1, 7), watermark: nil, expected: .ignore(.removed)),
        Case(name: "update for an unseen notification is stored without alerting", operation: .update, at: r(1, 3), existing: nil, watermark: nil, expected: .insert),
        Case(name: "remove of a live notification", operation: .remove, at: r(1, 6), existing: live(1, 5), watermark: nil, expected: .markRemoved),
        Case(name: "remove of an unseen notification leaves a tombstone", operation: .remove, at: r(1, 2), existing: nil, watermark: nil, expected: .markRemoved),
        Case(name: "late remove older than an update", operation: .remove, at: r(1, 4), existing: live(1, 5), watermark: nil, expected: .ignore(.stale)),
        Case(name: "add older than a remove-all", operation: .add, at: r(1, 3), existing: nil, watermark: r(1, 3), expected: .ignore(.beforeRemoveAll)),
        Case(name: "add just after a remove-all", operation: .add, at: r(1, 4), existing: nil, watermark: r(1, 3), expected: .insert),
        Case(name: "update older than a remove-all", operation: .update, at: r(1, 2), existing: live(1, 1), watermark: r(1, 3), expected: .ignore(.beforeRemoveAll)),
    ]

    @Test("Decision table", arguments: cases)
    func decide(_ testCase: Case) {
        #expect(NotificationLedger.decide(testCase.operation, at: testCase.at, existing: testCase.existing, removeAllWatermark: testCase.watermark) == testCase.expected)
    }

    @Test("Revisions order by exchange epoch, then sequence")
    func ordering() {
        #expect(Revision(epoch: 1, sequence: 9) < Revision(epoch: 2, sequence: 1))
        #expect(Revision(epoch: 2, sequence: 1) < Revision(epoch: 2, sequence: 2))
        #expect(!(Revision(epoch: 2, sequence: 2) < Revision(epoch: 2, sequence: 2)))
    }
}
