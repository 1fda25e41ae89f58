import NotifBridgeANCS
import Testing

@Suite("ANCS client against the simulated phone")
struct ANCSRoundTripTests {
    static let apps = ["com.apple.MobileSMS": "Messages", "com.apple.mobilemail": "Mail", "org.example.ünïcode": "Ünïcode 🙂"]

    /// What the accessory must hold: every notification the phone holds, as the phone holds it.
    static func expected(_ server: ANCSServer, limits: ANCSClient.Limits) -> [UInt32: ANCSNotification] {
        server.notifications.mapValues { entry in
            var notification = entry.notification
            notification.appName = apps[notification.appIdentifier]
            while notification.title.utf8.count > Int(limits.maxTitleLength) { notification.title.removeLast() }
            if !notification.flags.contains(.positiveAction) { notification.positiveActionLabel = nil }
            if !notification.flags.contains(.negativeAction) { notification.negativeActionLabel = nil }
            return notification
        }
    }

    @Test("Seeded posts, edits and removals, replies split at random MTUs", arguments: [1, 2, 3, 7, 42, 2026] as [UInt64])
    func randomised(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let limits = ANCSClient.Limits(maxTitleLength: 24)
        var link = Link(client: ANCSClient(limits: limits), server: ANCSServer(appNames: Self.apps))
        var held: [UInt32: ANCSNotification] = [:]
        let categories = ANCSCategory.allCases
        for step in 0..<300 {
            link.now += .milliseconds(Int.random(in: 0...50, using: &random))
            let uid = UInt32.random(in: 1...20, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let app = Array(Self.apps.keys.sorted())[Int.random(in: 0..<3, using: &random)]
                let flags = ANCSEventFlags(rawValue: UInt8.random(in: 0...0x1F, using: &random))
                let notification = ANCSNotification(
                    uid: uid, flags: flags, category: categories.randomElement(using: &random)!, appIdentifier: app,
                    title: "Title \(step) " + String(repeating: "é", count: Int.random(in: 0...20, using: &random)),
                    subtitle: step % 3 == 0 ? "sub \(step)" : "", message: "Message \(step) 🙂",
                    date: step % 2 == 0 ? "20261123T1015\(String(format2: step % 60))" : nil,
                    positiveActionLabel: "Yes", negativeActionLabel: "No"
                )
                let event = link.server.post(notification, preExisting: step < 10)
                let actions = link.client.receivedNotificationSource(event, now: link.now)
                link.carry(actions) { _ in Int.random(in: 1...180, using: &random) }
            case 6..<9:
                if let event = link.server.remove(uid: uid) {
                    let actions = link.client.receivedNotificationSource(event, now: link.now)
                    link.carry(actions)
                }
            default:
                let action: ANCSActionID = Bool.random(using: &random) ? .positive : .negative
                if link.server.notifications[uid]?.notification.flags.contains(action.flag) == true {
                    let actions = link.client.perform(action, uid: uid, now: link.now)
                    link.carry(actions)
                }
            }
            #expect(link.client.pendingCount == 0)
        }
        for action in link.reported {
            switch action {
            case .added(let notification), .modified(let notification): held[notification.uid] = notification
            case .removed(let uid, _): held[uid] = nil
            case .refused(let reason): Issue.record("refused: \(reason)")
            case .writeControlPoint: break
            }
        }
        #expect(!held.isEmpty)
        #expect(!link.performed.isEmpty)
        #expect(held == Self.expected(link.server, limits: limits))
        #expect(link.client.trackedCount == link.server.notifications.count)
    }

    @Test("Actions the phone performs are the ones the flags offer")
    func performed() {
        var link = Link(server: ANCSServer(appNames: Self.apps))
        let event = link.server.post(ANCSNotification(uid: 3, flags: .negativeAction, category: .incomingCall, appIdentifier: "com.apple.MobileSMS"))
        for step in 0..<3 {
            let actions = switch step {
            case 0: link.client.receivedNotificationSource(event, now: link.now)
            case 1: link.client.perform(.negative, uid: 3, now: link.now)
            default: link.client.perform(.positive, uid: 3, now: link.now)
            }
            link.carry(actions)
        }
        #expect(link.performed.map(\.0) == [3])
        #expect(link.performed.map(\.1) == [.negative])
        #expect(link.reported.refusals.count == 1)
    }

    @Test("The phone honours requested maximum lengths without splitting a character")
    func serverTruncates() {
        var server = ANCSServer()
        _ = server.post(ANCSNotification(uid: 1, appIdentifier: "a", title: "ééé"))
        let request = ANCSControlPointRequest.notificationAttributes(uid: 1, [.title(maxLength: 5)])
        #expect(server.handleControlPoint(request.bytes) == .dataSource([0] + le32(1) + attribute(1, "éé")))
        #expect(server.handleControlPoint(ANCSControlPointRequest.notificationAttributes(uid: 2, [.appIdentifier]).bytes) == .error(ANCSError(.invalidParameter, "")))
        #expect(server.handleControlPoint(ANCSControlPointRequest.performAction(uid: 1, .positive).bytes) == .error(ANCSError(.actionFailed, "")))
        #expect(server.handleControlPoint([9]) == .error(ANCSError(.unknownCommand, "")))
    }

    @Test("Posting twice is modified; removing twice is nothing")
    func serverEvents() throws {
        var server = ANCSServer()
        let note = ANCSNotification(uid: 5, category: .email, appIdentifier: "a")
        #expect(try ANCSNotificationSourceEvent(bytes: server.post(note, preExisting: true)) == .init(eventID: .added, flags: .preExisting, category: .email, categoryCount: 1, uid: 5))
        #expect(try ANCSNotificationSourceEvent(bytes: server.post(note)).eventID == .modified)
        #expect(try server.remove(uid: 5).map { try ANCSNotificationSourceEvent(bytes: $0) } == .init(eventID: .removed, flags: [], category: .email, categoryCount: 0, uid: 5))
        #expect(server.remove(uid: 5) == nil)
    }
}

extension String {
    /// Two decimal digits.
    init(format2 value: Int) {
        self = value < 10 ? "0\(value)" : "\(value)"
    }
}
