import NotifBridgeHost
import Testing

/// When `phone load` sends each notification: one at a time, or in groups that keep the rate.
@Suite struct LoadRunScheduleTests {
    struct Case: Sendable, CustomStringConvertible {
        var rate: Double
        var group: Int
        /// Due times in milliseconds of notifications 1, 2, 3, …
        var dueMilliseconds: [Double]
        var description: String { "\(rate)/s, \(group) at a time" }
    }

    static let cases: [Case] = [
        Case(rate: 1000, group: 1, dueMilliseconds: [0, 1, 2, 3, 4]),
        Case(rate: 1000, group: 2, dueMilliseconds: [0, 0, 2, 2, 4]),
        Case(rate: 1000, group: 3, dueMilliseconds: [0, 0, 0, 3, 3, 3, 6]),
        Case(rate: 500, group: 4, dueMilliseconds: [0, 0, 0, 0, 8]),
        // Unpaced: everything is due at once, whatever the group.
        Case(rate: 0, group: 1, dueMilliseconds: [0, 0, 0]),
        Case(rate: 0, group: 5, dueMilliseconds: [0, 0, 0]),
    ]

    @Test(arguments: cases)
    func dueTimes(_ c: Case) {
        let run = LoadRun(count: c.dueMilliseconds.count, rate: c.rate, group: c.group)
        for (offset, expected) in c.dueMilliseconds.enumerated() {
            let due = run.due(index: offset + 1)
            #expect(abs(Double(due.components.seconds) * 1000 + Double(due.components.attoseconds) / 1e15 - expected) < 1e-6,
                    "notification \(offset + 1)")
        }
    }

    /// Whatever the group, the last notification of a long run is due when one at a time would
    /// have sent it, give or take one group: the average rate is kept.
    @Test(arguments: [1, 3, 10, 30])
    func groupsKeepTheRate(group: Int) {
        let run = LoadRun(count: 20_000, rate: 3_000, group: group)
        let last = run.due(index: 20_000)
        let single = LoadRun(count: 20_000, rate: 3_000).due(index: 20_000)
        #expect(last <= single)
        #expect(single - last < .seconds(Double(group) / 3_000))
    }
}
