import Foundation
import NotifBridgeANCS
import NotifBridgeWire
import Testing

@Suite("ANCS mapping to HostEvent")
struct ANCSMappingTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let received = Date(timeIntervalSince1970: 1_800_000_000)

    struct Case: Sendable, CustomTestStringConvertible {
        var flags: ANCSEventFlags
        var category: ANCSCategory
        var wireCategory: Notifbridge_V1_Category
        var kind: WireAlertingContext.Kind
        var shouldAlert: Bool
        var canAlert: Bool
        var timeSensitive: Bool
        var actions: [String]
        var testDescription: String { "\(category), flags \(flags.rawValue)" }
    }

    static let cases: [Case] = [
        .init(flags: [], category: .other, wireCategory: .other, kind: .notification, shouldAlert: true, canAlert: true, timeSensitive: false, actions: []),
        .init(flags: [.important, .positiveAction, .negativeAction], category: .incomingCall, wireCategory: .incomingCall, kind: .incomingCall,
              shouldAlert: true, canAlert: true, timeSensitive: true, actions: ["ancs.positive", "ancs.negative"]),
        .init(flags: .silent, category: .missedCall, wireCategory: .missedCall, kind: .notification, shouldAlert: false, canAlert: true, timeSensitive: false, actions: []),
        .init(flags: .preExisting, category: .email, wireCategory: .email, kind: .notification, shouldAlert: false, canAlert: false, timeSensitive: false, actions: []),
        .init(flags: .negativeAction, category: .social, wireCategory: .social, kind: .notification, shouldAlert: true, canAlert: true, timeSensitive: false, actions: ["ancs.negative"]),
        .init(flags: [.silent, .preExisting, .important], category: .entertainment, wireCategory: .entertainment, kind: .notification,
              shouldAlert: false, canAlert: false, timeSensitive: true, actions: []),
        .init(flags: .positiveAction, category: .healthAndFitness, wireCategory: .healthAndFitness, kind: .notification, shouldAlert: true, canAlert: true, timeSensitive: false, actions: ["ancs.positive"]),
    ]

    @Test("Category, flags → kind, alerting, attributes, actions", arguments: cases)
    func table(_ test: Case) throws {
        let notification = ANCSNotification(uid: 9, flags: test.flags, category: test.category, appIdentifier: "com.a", title: "T", message: "M",
                                            positiveActionLabel: "Yes", negativeActionLabel: "No")
        let event = try #require(ANCSMapping.event(for: .added(notification), sequence: 3, receivedAt: Self.received, timeZone: Self.utc))
        guard case .add(let add) = event.event else {
            Issue.record("expected add")
            return
        }
        #expect(event.sequence == 3)
        #expect(add.notification.category == test.wireCategory)
        #expect(add.alerting.kind == test.kind)
        #expect(add.alerting.shouldAlert == test.shouldAlert)
        #expect(add.alerting.notificationCanAlert == test.canAlert)
        #expect(add.alerting.hasSound == !test.flags.contains(.silent))
        #expect((add.notification.attributes & 1 != 0) == test.timeSensitive)
        #expect(add.notification.actions.map(\.identifier) == test.actions)
        #expect(add.notification.actions.map(\.type) == test.actions.map { $0 == "ancs.positive" ? .background : .dismiss })
        #expect(add.notification.actions.map(\.title) == test.actions.map { $0 == "ancs.positive" ? "Yes" : "No" })
    }

    @Test("Every ANCS category maps to its proto value plus one")
    func categories() {
        for category in ANCSCategory.allCases {
            let wire = ANCSMapping.wireNotification(ANCSNotification(uid: 1, category: category, appIdentifier: "a"), receivedAt: Self.received, timeZone: Self.utc)
            #expect(wire.category.rawValue == Int(category.rawValue) + 1)
        }
    }

    @Test("Identifiers, names, text and dates")
    func fields() throws {
        let named = ANCSNotification(uid: 77, appIdentifier: "com.apple.MobileSMS", appName: "Messages", title: "Anna", message: "Hi", date: "20261123T201530")
        let wire = ANCSMapping.wireNotification(named, receivedAt: Self.received, timeZone: TimeZone(secondsFromGMT: 3600)!)
        #expect(wire.id == WireNotificationID(source: "com.apple.MobileSMS", notification: "ancs:77"))
        #expect(wire.sourceName == "Messages")
        #expect(wire.title == "Anna")
        #expect(!wire.hasSubtitle)
        #expect(wire.body.runs.map(\.text) == ["Hi"])
        #expect(wire.deliveryDateMs == 1_795_461_330_000)
        let bare = ANCSMapping.wireNotification(ANCSNotification(uid: 1, appIdentifier: "x", date: "2026-11-23"), receivedAt: Self.received, timeZone: Self.utc)
        #expect(bare.sourceName == "x")
        #expect(!bare.hasTitle && !bare.hasBody)
        #expect(bare.deliveryDateMs == 1_800_000_000_000)
        #expect(ANCSMapping.uid(forNotificationIdentifier: "ancs:77") == 77)
    }

    @Test("ANCS dates: valid ones parse in the given time zone, malformed ones do not", arguments: [
        ("20261123T201530", true), ("20240229T000000", true), ("20250229T000000", false), ("20261323T000000", false),
        ("20261123 201530", false), ("2026112T3201530", false), ("20261123T2015", false), ("", false), ("2026112xT201530", false),
    ])
    func dates(_ text: String, _ valid: Bool) {
        #expect((ANCSMapping.date(fromANCS: text, timeZone: Self.utc) != nil) == valid)
    }

    @Test("Modified is an update, removed a remove; writes and refusals are not events")
    func otherActions() throws {
        let note = ANCSNotification(uid: 5, appIdentifier: "a")
        let update = try #require(ANCSMapping.event(for: .modified(note), sequence: 1, receivedAt: Self.received, timeZone: Self.utc))
        guard case .update(let body) = update.event else {
            Issue.record("expected update")
            return
        }
        #expect(body.notification.id.notificationIdentifier == "ancs:5")
        let remove = try #require(ANCSMapping.event(for: .removed(uid: 5, appIdentifier: "a"), sequence: 2, receivedAt: Self.received, timeZone: Self.utc))
        #expect(remove.event == .remove(.with { $0.id = WireNotificationID(source: "a", notification: "ancs:5") }))
        #expect(ANCSMapping.event(for: .writeControlPoint([0]), sequence: 3, receivedAt: Self.received, timeZone: Self.utc) == nil)
        #expect(ANCSMapping.event(for: .refused("x"), sequence: 3, receivedAt: Self.received, timeZone: Self.utc) == nil)
        #expect(ANCSMapping.actionID(forIdentifier: "ancs.positive") == .positive)
        #expect(ANCSMapping.actionID(forIdentifier: "ancs.negative") == .negative)
        #expect(ANCSMapping.actionID(forIdentifier: "reply") == nil)
    }
}
