import Foundation
import NotifBridgeANCS
import NotifBridgeAccessoryCore
import NotifBridgeWire
import Testing

/// The feed against the ANCS server model: what the accessory stores from an iPhone's ANCS,
/// how catch-up ends, and AccessoryNotifications winning.
@Suite struct ANCSFeedTests {
    static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_02"
    static let date = Date(timeIntervalSince1970: 1_790_000_000)

    /// A feed connected to `server`, answering every Control Point request from it.
    struct Rig {
        var feed = ANCSFeed(configuration: .init(catchUpQuiet: .seconds(3), timeZone: TimeZone(identifier: "UTC")!))
        var server = ANCSServer()
        var clock = ContinuousClock.now
        var delivered: [HostEvent] = []
        var exchangeIDs: Set<UInt64> = []
        var withdrawals: [Set<String>] = []

        init() {
            server.appNames["com.example.chat"] = "Chat"
        }

        mutating func connect(_ device: String = ANCSFeedTests.device, exchangeID: UInt64 = 7) {
            settle(feed.connected(device, exchangeID: exchangeID, now: clock), device: device)
        }

        mutating func post(_ uid: UInt32, preExisting: Bool = false, flags: ANCSEventFlags = [], category: ANCSCategory = .social, device: String = ANCSFeedTests.device) {
            let notification = ANCSNotification(
                uid: uid, flags: flags, category: category, appIdentifier: "com.example.chat", appName: nil,
                title: "Title \(uid)", subtitle: "", message: "Message \(uid)", date: "20260912T101500",
                positiveActionLabel: flags.contains(.positiveAction) ? "Reply" : nil,
                negativeActionLabel: flags.contains(.negativeAction) ? "Clear" : nil
            )
            let bytes = server.post(notification, preExisting: preExisting)
            settle(feed.receivedNotificationSource(bytes, from: device, now: clock, date: ANCSFeedTests.date), device: device)
        }

        mutating func remove(_ uid: UInt32) {
            guard let bytes = server.remove(uid: uid) else { return }
            settle(feed.receivedNotificationSource(bytes, from: ANCSFeedTests.device, now: clock, date: ANCSFeedTests.date), device: ANCSFeedTests.device)
        }

        mutating func tick(after seconds: Int, established: Bool = false) {
            clock += .seconds(seconds)
            settle(feed.tick(now: clock, date: ANCSFeedTests.date, otherSourceEstablished: established), device: ANCSFeedTests.device)
        }

        /// A tick made `quiet` after the connection's last announcement, handed over 30 s later,
        /// as by a runner that fell behind.
        mutating func lateTick(madeAfter quiet: Duration) {
            let made = clock + quiet
            settle(feed.tick(now: made + .seconds(30), made: made, date: ANCSFeedTests.date, otherSourceEstablished: false), device: ANCSFeedTests.device)
        }

        /// Carries out the feed's actions the way the runner does, with the server as the iPhone.
        mutating func settle(_ actions: [ANCSFeed.Action], device: String) {
            for action in actions {
                switch action {
                case .writeControlPoint(_, let bytes):
                    if case .dataSource(let reply) = server.handleControlPoint(bytes) {
                        settle(feed.receivedDataSource(reply, from: device, now: clock, date: ANCSFeedTests.date), device: device)
                    }
                case .deliver(let events, let exchangeID):
                    delivered += events
                    exchangeIDs.insert(exchangeID)
                case .withdraw(let keeping):
                    withdrawals.append(keeping)
                case .log:
                    break
                }
            }
        }
    }

    @Test func preExistingNotificationsAreStoredQuietlyAndCatchUpWithdrawsTheRest() {
        var rig = Rig()
        rig.connect()
        rig.post(1, preExisting: true)
        rig.post(2, preExisting: true)
        #expect(rig.delivered.count == 2)
        #expect(rig.delivered.allSatisfy { if case .add(let add) = $0.event { !add.alerting.shouldAlert } else { false } })
        #expect(rig.withdrawals.isEmpty)
        rig.tick(after: 2)
        #expect(rig.withdrawals.isEmpty, "catch-up is not over before it has been quiet for catchUpQuiet")
        rig.tick(after: 1)
        #expect(rig.withdrawals == [["ancs:1", "ancs:2"]])
        #expect(!rig.feed.catchingUp)
    }

    /// Catch-up's quiet is judged as of when the tick was made, not when a busy runner got to it:
    /// announcements may be waiting right behind it.
    @Test("A tick made catchUpQuiet after the last announcement ends catch-up; one made 1 ns sooner does not, however late it is handed over",
          arguments: [(Duration.seconds(3) - .nanoseconds(1), false), (.seconds(3), true)])
    func catchUpJudgedWhenMade(quiet: Duration, ends: Bool) {
        var rig = Rig()
        rig.connect()
        rig.post(1, preExisting: true)
        rig.lateTick(madeAfter: quiet)
        #expect(rig.feed.catchingUp == !ends)
        #expect(rig.withdrawals == (ends ? [["ancs:1"]] : []))
    }

    @Test func aNewNotificationEndsCatchUpAtOnce() {
        var rig = Rig()
        rig.connect()
        rig.post(1, preExisting: true)
        rig.post(3)
        #expect(rig.withdrawals == [["ancs:1", "ancs:3"]], "the new notification is kept too")
        guard case .add(let add) = rig.delivered.last?.event else { Issue.record("no add for the new notification"); return }
        #expect(add.alerting.shouldAlert)
        #expect(add.notification.id.notificationIdentifier == "ancs:3")
    }

    @Test func eventsAreNumberedFromOneUnderTheConnectionsEpoch() {
        var rig = Rig()
        rig.connect(exchangeID: 42)
        rig.post(1)
        rig.post(2)
        rig.remove(1)
        #expect(rig.delivered.map(\.sequence) == [1, 2, 3])
        #expect(rig.exchangeIDs == [42])
        guard case .remove(let remove) = rig.delivered.last?.event else { Issue.record("no remove"); return }
        #expect(remove.id.sourceIdentifier == "com.example.chat")
    }

    @Test func accessoryNotificationsWins() {
        var rig = Rig()
        rig.connect()
        rig.post(1)
        rig.tick(after: 1, established: true)
        #expect(rig.withdrawals.last == [])
        #expect(rig.feed.yielding)
        rig.post(2)
        #expect(rig.delivered.count == 1, "nothing from ANCS is stored while an AccessoryNotifications session is established")
        rig.tick(after: 1, established: false)
        rig.post(4)
        #expect(rig.delivered.count == 2)
    }

    @Test func aSecondDeviceIsIgnored() {
        var rig = Rig()
        rig.connect()
        let other = "/org/bluez/hci0/dev_00_AA_01_01_00_03"
        let actions = rig.feed.connected(other, exchangeID: 9, now: rig.clock)
        #expect(actions.allSatisfy { if case .log = $0 { true } else { false } })
        rig.post(5, device: other)
        #expect(rig.delivered.isEmpty)
        #expect(rig.feed.device == Self.device)
    }

    @Test func performChecksTheIdentifierAndTheConnection() {
        var feed = ANCSFeed()
        #expect(feed.perform(.positive, identifier: "ancs:1", now: .now, date: Self.date) == .failure(.notConnected))
        _ = feed.connected(Self.device, exchangeID: 1, now: .now)
        #expect(feed.perform(.positive, identifier: "0F2A-UUID", now: .now, date: Self.date) == .failure(.notANCS("0F2A-UUID")))
    }

    @Test func performWritesTheControlPoint() {
        var rig = Rig()
        rig.connect()
        rig.post(8, flags: [.positiveAction, .negativeAction])
        guard case .success(let actions) = rig.feed.perform(.negative, identifier: "ancs:8", now: rig.clock, date: Self.date) else {
            Issue.record("perform failed"); return
        }
        let writes = actions.compactMap { if case .writeControlPoint(_, let bytes) = $0 { bytes } else { nil } }
        #expect(writes == [ANCSControlPointRequest.performAction(uid: 8, .negative).bytes])
    }

    @Test(arguments: [("ancs:0", UInt32(0)), ("ancs:4294967295", UInt32.max), ("ancs:4294967296", nil), ("ancs:", nil), ("anc:1", nil), ("ancs:-1", nil)] as [(String, UInt32?)])
    func identifiers(_ identifier: String, uid: UInt32?) {
        #expect(ANCSMapping.uid(forNotificationIdentifier: identifier) == uid)
    }

    @Test("Catch-up remembers at most maxCatchUpIdentifiers; past that it withdraws nothing", arguments: [
        (ANCSFeed.maxCatchUpIdentifiers, true), (ANCSFeed.maxCatchUpIdentifiers + 1, false),
    ])
    func catchUpLimit(announced: Int, withdraws: Bool) {
        var rig = Rig()
        rig.connect()
        for uid in 0..<UInt32(announced) {
            rig.post(uid, preExisting: true)
        }
        rig.tick(after: 4)
        #expect(!rig.feed.catchingUp)
        #expect(rig.withdrawals.map(\.count) == (withdraws ? [announced] : []))
    }
}
