import NotifBridgeANCS
import Testing

@Suite("ANCS client")
struct ANCSClientTests {
    let t0 = ContinuousClock.now
    static let getAttributes7 = ANCSControlPointRequest.notificationAttributes(uid: 7, ANCSClient.Limits().notificationAttributes).bytes
    static let getApp = ANCSControlPointRequest.appAttributes(appIdentifier: "com.example.chat", [.displayName]).bytes
    static let reply7 = notificationReply(uid: 7, app: "com.example.chat", title: "Anna", message: "See you at 8 🙂", date: "20261123T201500", positive: "Reply", negative: "Clear")
    static let expected7 = ANCSNotification(
        uid: 7, flags: [.positiveAction, .negativeAction], category: .social, appIdentifier: "com.example.chat", appName: "Chat",
        title: "Anna", message: "See you at 8 🙂", date: "20261123T201500", positiveActionLabel: "Reply", negativeActionLabel: "Clear"
    )

    /// A client that has reported notification 7, with the app's name cached.
    func clientWith7() -> ANCSClient {
        var client = ANCSClient()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 7, flags: [.positiveAction, .negativeAction]), now: t0)
        _ = client.receivedDataSource(Self.reply7, now: t0)
        _ = client.receivedDataSource(appReply("com.example.chat", name: "Chat"), now: t0)
        return client
    }

    @Test("Added: attributes, then the app's name, then one notification")
    func added() {
        var client = ANCSClient()
        let first = client.receivedNotificationSource(sourceEvent(.added, uid: 7, flags: [.positiveAction, .negativeAction]), now: t0)
        #expect(first == [.writeControlPoint(Self.getAttributes7)])
        #expect(client.pendingCount == 1)
        #expect(client.receivedDataSource(Self.reply7, now: t0) == [.writeControlPoint(Self.getApp)])
        #expect(client.receivedDataSource(appReply("com.example.chat", name: "Chat"), now: t0) == [.added(Self.expected7)])
        #expect(client.pendingCount == 0)
    }

    @Test("A reply split at every byte boundary gives the same notification")
    func splitEverywhere() {
        for cut in 0...Self.reply7.count {
            var client = ANCSClient()
            _ = client.receivedNotificationSource(sourceEvent(.added, uid: 7, flags: [.positiveAction, .negativeAction]), now: t0)
            var actions = client.receivedDataSource(Array(Self.reply7[..<cut]), now: t0)
            actions += client.receivedDataSource(Array(Self.reply7[cut...]), now: t0)
            actions += client.receivedDataSource(appReply("com.example.chat", name: "Chat"), now: t0)
            #expect(actions.notifications == [Self.expected7], "cut at \(cut)")
            #expect(actions.refusals.isEmpty, "cut at \(cut)")
        }
    }

    @Test("Two replies back to back, then bytes past the end of a reply are refused")
    func backToBack() {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: t0)
        #expect(client.pendingCount == 2)
        let second = client.receivedDataSource(notificationReply(uid: 8, app: "com.example.chat", title: "B"), now: t0)
        #expect(second.notifications.map(\.title) == ["B"])
        #expect(second.writes.count == 1)
        let third = client.receivedDataSource(notificationReply(uid: 9, app: "com.example.chat", title: "C") + [0xEE, 0xEE], now: t0)
        #expect(third.notifications.map(\.title) == ["C"])
        #expect(third.refusals.count == 1)
        #expect(client.pendingCount == 0)
        #expect(client.receivedDataSource([0], now: t0).refusals.count == 1)
    }

    @Test("A reply timeout drops the request and its partial reply, and the next goes out")
    func timeout() {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: t0)
        _ = client.receivedDataSource(Array(notificationReply(uid: 8, app: "com.example.chat").prefix(6)), now: t0)
        #expect(client.tick(now: t0 + .seconds(4)).isEmpty)
        let expired = client.tick(now: t0 + .seconds(5))
        #expect(expired.refusals.count == 1)
        #expect(expired.writes == [ANCSControlPointRequest.notificationAttributes(uid: 9, ANCSClient.Limits().notificationAttributes).bytes])
        let done = client.receivedDataSource(notificationReply(uid: 9, app: "com.example.chat", title: "C"), now: t0 + .seconds(6))
        #expect(done == [.added(ANCSNotification(uid: 9, category: .social, appIdentifier: "com.example.chat", appName: "Chat", title: "C"))])
    }

    /// A driver that fell behind (a slow commit) hands over a reply that arrived in time, after
    /// the deadline has passed on its clock: only a tick judges deadlines, so the reply is read.
    @Test("A reply handed over after its deadline, before any tick judged it, is read", arguments: [5, 60])
    func lateHandedReply(seconds: Int) {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        let late = t0 + .seconds(seconds)
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: late)
        #expect(client.receivedDataSource(notificationReply(uid: 8, app: "com.example.chat", title: "B"), now: late).notifications.map(\.title) == ["B"])
        #expect(client.pendingCount == 1, "9's request went out")
    }

    /// A tick judges as of when it was made: one made just before the deadline and handed over
    /// long after it drops nothing; one made at the deadline drops the request.
    @Test("A tick made at the deadline drops the request; one made 1 ns before, handed over late, does not", arguments: [(Duration.nanoseconds(-1), 0), (.zero, 1)])
    func tickJudgedWhenMade(offset: Duration, refusals: Int) {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        let deadline = t0 + ANCSClient.Limits().replyTimeout
        let actions = client.tick(now: deadline + .seconds(30), made: deadline + offset)
        #expect(actions.refusals.count == refusals)
        #expect(client.pendingCount == 1 - refusals)
    }

    @Test("Queue: maxQueuedEvents waiting is accepted, one more drops the oldest", arguments: [false, true])
    func queueLimit(over: Bool) {
        var client = ANCSClient(limits: .init(maxQueuedEvents: 3))
        var actions: [ANCSClient.Action] = []
        for uid in UInt32(1)...(over ? 5 : 4) {  // the first is in flight, the rest queue
            actions += client.receivedNotificationSource(sourceEvent(.added, uid: uid), now: t0)
        }
        #expect(client.pendingCount == 4)
        #expect(actions.refusals.count == (over ? 1 : 0))
        var uids: [UInt32] = []
        for _ in 0..<4 {
            guard case .notificationAttributes(let uid, _) = try? ANCSControlPointRequest(bytes: actions.writes.last ?? []) else { break }
            uids.append(uid)
            actions = client.receivedDataSource(notificationReply(uid: uid, app: ""), now: t0)
        }
        #expect(uids == (over ? [1, 3, 4, 5] : [1, 2, 3, 4]))
    }

    @Test("Title: maxTitleLength bytes kept whole, one more cut to it", arguments: [0, 1])
    func titleLength(extra: Int) {
        var client = ANCSClient(limits: .init(maxTitleLength: 8))
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 1), now: t0)
        let title = String(repeating: "t", count: 8 + extra)
        let actions = client.receivedDataSource(notificationReply(uid: 1, app: "", title: title), now: t0)
        #expect(actions.notifications.map(\.title) == ["tttttttt"])
        #expect(actions.refusals.isEmpty)
    }

    @Test("An attribute without a requested maximum: the limit accepted, one more refuses the reply", arguments: [0, 1])
    func otherLength(extra: Int) {
        var client = ANCSClient(limits: .init(maxOtherAttributeLength: 10))
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 1), now: t0)
        let actions = client.receivedDataSource(notificationReply(uid: 1, app: "", date: String(repeating: "2", count: 10 + extra)), now: t0)
        #expect(actions.notifications.count == 1 - extra)
        #expect(actions.refusals.count == extra)
        #expect(client.pendingCount == 0)
    }

    @Test("maxDataSourceReplyBytes: a reply of exactly the limit is read, one more byte refused", arguments: [0, 1])
    func replyLength(extra: Int) {
        let reply = notificationReply(uid: 1, app: "", message: String(repeating: "m", count: 40 + extra))
        var client = ANCSClient(limits: .init(maxDataSourceReplyBytes: reply.count - extra))
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 1), now: t0)
        let actions = client.receivedDataSource(reply, now: t0)
        #expect(actions.notifications.count == 1 - extra)
        #expect(actions.refusals.count == extra)
    }

    @Test("Invalid UTF-8 is repaired, not fatal")
    func invalidUTF8() {
        var client = ANCSClient()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 1), now: t0)
        let reply = [0] + le32(1) + attribute(0, "") + attribute(1, [0x41, 0xFF, 0xC3]) + attribute(2, "") + attribute(3, [0xE2, 0x82])
            + attribute(5, "") + attribute(6, "") + attribute(7, "")
        let actions = client.receivedDataSource(reply, now: t0)
        #expect(actions.notifications.map(\.title) == ["A\u{FFFD}\u{FFFD}"])
        #expect(actions.notifications.map(\.message) == ["\u{FFFD}"])
    }

    @Test("Removal of a UID never reported is ignored")
    func unknownRemoval() {
        var client = clientWith7()
        #expect(client.receivedNotificationSource(sourceEvent(.removed, uid: 99), now: t0).isEmpty)
        #expect(client.receivedNotificationSource(sourceEvent(.removed, uid: 7), now: t0) == [.removed(uid: 7, appIdentifier: "com.example.chat")])
        #expect(client.receivedNotificationSource(sourceEvent(.removed, uid: 7), now: t0).isEmpty)
    }

    @Test("Removal cancels a queued fetch and an in-flight one; the in-flight reply is read and discarded")
    func removeCancels() {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: t0)
        #expect(client.receivedNotificationSource(sourceEvent(.removed, uid: 9), now: t0).isEmpty)
        #expect(client.pendingCount == 1)
        #expect(client.receivedNotificationSource(sourceEvent(.removed, uid: 8), now: t0).isEmpty)
        let late = client.receivedDataSource(notificationReply(uid: 8, app: "com.example.chat", title: "B"), now: t0)
        #expect(late.isEmpty)
        #expect(client.pendingCount == 0)
    }

    @Test("A modified event refetches and reports modified")
    func modified() {
        var client = clientWith7()
        let refetch = client.receivedNotificationSource(sourceEvent(.modified, uid: 7, flags: .positiveAction), now: t0)
        #expect(refetch == [.writeControlPoint(Self.getAttributes7)])
        let actions = client.receivedDataSource(notificationReply(uid: 7, app: "com.example.chat", title: "Anna (2)", positive: "Reply", negative: "Clear"), now: t0)
        guard case .modified(let notification) = actions.first else {
            Issue.record("expected modified, got \(actions)")
            return
        }
        #expect(notification.title == "Anna (2)")
        #expect(notification.negativeActionLabel == nil)
    }

    @Test("Perform: unknown UID and an action the flags do not offer are refused; a known one is written without holding the line")
    func perform() {
        var client = ANCSClient()
        #expect(client.perform(.positive, uid: 7, now: t0).refusals.count == 1)
        client = clientWith7()
        let write = client.perform(.negative, uid: 7, now: t0)
        #expect(write == [.writeControlPoint(hex("02 07 00 00 00 01"))])
        #expect(client.pendingCount == 0)
        _ = client.receivedNotificationSource(sourceEvent(.modified, uid: 7, flags: .positiveAction), now: t0)
        _ = client.receivedDataSource(notificationReply(uid: 7, app: "com.example.chat"), now: t0)
        #expect(client.perform(.negative, uid: 7, now: t0).refusals.count == 1)
        #expect(client.perform(.positive, uid: 7, now: t0).writes.count == 1)
        let failed = client.controlPointWriteFailed("ATT 0xA3", now: t0)
        #expect(failed.refusals.count == 1)
    }

    @Test("The app's name is fetched once per app; a failed fetch reports without a name")
    func appNameCache() {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        let cached = client.receivedDataSource(notificationReply(uid: 8, app: "com.example.chat"), now: t0)
        #expect(cached.writes.isEmpty)
        #expect(cached.notifications.map(\.appName) == ["Chat"])
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: t0)
        let other = client.receivedDataSource(notificationReply(uid: 9, app: "com.other"), now: t0)
        #expect(other.writes == [ANCSControlPointRequest.appAttributes(appIdentifier: "com.other", [.displayName]).bytes])
        let failed = client.controlPointWriteFailed("ATT 0xA2", now: t0)
        #expect(failed.notifications.map(\.appName) == [nil])
        #expect(failed.refusals.count == 1)
    }

    @Test("A reply for another UID is refused and the next request goes out")
    func unexpectedReply() {
        var client = clientWith7()
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 8), now: t0)
        _ = client.receivedNotificationSource(sourceEvent(.added, uid: 9), now: t0)
        let actions = client.receivedDataSource(notificationReply(uid: 5, app: "x"), now: t0)
        #expect(actions.refusals.count == 1)
        #expect(actions.writes.count == 1)
        #expect(client.pendingCount == 1)
    }
}
