import Foundation
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

@Suite("APNs payloads")
struct APNsPayloadTests {
    static func context(focus: Bool = false) throws -> APNsPayload.Context {
        let categories = try JSONDecoder().decode([String: [HostNotification.ActionInput]].self, from: TestFixtures.data("apns/categories.json"))
        let strings = try JSONDecoder().decode([String: String].self, from: TestFixtures.data("apns/Localizable.json"))
        return APNsPayload.Context(source: "com.example.app", sourceName: "Example", id: "n1", categories: categories, strings: strings, focus: focus)
    }

    struct Expected: CustomTestStringConvertible, Sendable {
        var file: String
        var title: String?
        var subtitle: String? = nil
        var body: String?
        var thread: String? = nil
        var actions: [String] = [APNsPayload.dismissActionIdentifier]
        var attributes: [HostNotification.AttributeInput]? = nil
        var shouldAlert = true
        var sound: HostAlerting.Sound? = .init(ignoreSilentMode: false)
        var mutableContent = false
        var testDescription: String { file }
    }

    static let corpus: [Expected] = [
        Expected(file: "message", title: "Anna Schmidt", body: "Are we still on for lunch? 🍜", thread: "chat-anna", actions: ["reply", "like", APNsPayload.dismissActionIdentifier], mutableContent: true),
        Expected(file: "meeting-time-sensitive", title: "Design review", subtitle: "Room 4.12", body: "Starts in 5 minutes", actions: ["join", "snooze", APNsPayload.dismissActionIdentifier], attributes: [.timeSensitive]),
        Expected(file: "critical-alarm", title: "Water leak detected", body: "Basement sensor · 03:12", attributes: [.critical], sound: .init(ignoreSilentMode: true)),
        Expected(file: "two-factor", title: "Your sign-in code", body: "428 913 is your code. Don't share it.", actions: ["copy", APNsPayload.dismissActionIdentifier], attributes: [.timeSensitive], sound: nil),
        Expected(file: "newsletter-passive", title: "Weekly digest", body: "12 new articles this week", shouldAlert: false, sound: nil),
        Expected(file: "localized-photos", title: "Message from 山田太郎", body: "Taro sent you 3 photos", thread: "yamada"),
        Expected(file: "parcel-german", title: "Paket unterwegs 📦", body: "Zustellung heute zwischen 14:00 und 16:00", sound: nil),
        Expected(file: "rtl-string-alert", title: nil, body: "مرحبا! هل وصلت إلى المحطة؟ 🚉"),
        Expected(file: "mail-preview", title: "Priya Natarajan", subtitle: "Re: Q4 roadmap — draft for Monday", body: "Thanks, this reads well. Two small things: can we move the BLE work before the store migration?", thread: "mail-thread-q4-roadmap"),
        Expected(file: "korean-chat", title: "김민지", body: "오늘 저녁에 시간 있어? 영화 보러 가자 🎬", thread: "kakao-minji", actions: ["reply", "like", APNsPayload.dismissActionIdentifier]),
        Expected(file: "hebrew-group", title: "דני כהן", subtitle: "צוות פיתוח", body: "נפגשים ב־19:00 בקפה ליד הים? \u{200F}הקישור ל־Zoom בפנים 🌊", thread: "tg-group-88120"),
        Expected(file: "secret-message", title: "Secret Message!", body: "(Encrypted)", thread: "chat-anna", mutableContent: true),
        Expected(file: "emoji-family", title: "Family 👨‍👩‍👧‍👦", subtitle: "Dad", body: "Look who learned to wave 👋🏽👶🏻 Grandma says hi from 🇩🇪 and 🏴󠁧󠁢󠁳󠁣󠁴󠁿", thread: "chat-family"),
    ]

    @Test("The fixture corpus maps as iOS would hand it to the data provider", arguments: corpus)
    func mapsCorpus(_ expected: Expected) throws {
        let mapped = try APNsPayload.map(TestFixtures.data("apns/\(expected.file).apns.json"), context: Self.context())
        #expect(mapped.notification.title.map { Array($0.utf8) } == expected.title.map { Array($0.utf8) })
        #expect(mapped.notification.subtitle.map { Array($0.utf8) } == expected.subtitle.map { Array($0.utf8) })
        #expect(mapped.notification.body.map { Array($0.utf8) } == expected.body.map { Array($0.utf8) })
        #expect(mapped.notification.thread == expected.thread)
        #expect(mapped.notification.actions?.map(\.id) == expected.actions)
        #expect(mapped.notification.attributes == expected.attributes)
        #expect(mapped.alerting.shouldAlert == expected.shouldAlert)
        #expect(mapped.alerting.sound == expected.sound)
        #expect(mapped.mutableContent == expected.mutableContent)
    }

    @Test("With a Focus on, only time-sensitive and critical alerts break through", arguments: [
        ("message", false), ("meeting-time-sensitive", true), ("critical-alarm", true), ("newsletter-passive", false),
    ])
    func focusBreakthrough(file: String, alerts: Bool) throws {
        let mapped = try APNsPayload.map(TestFixtures.data("apns/\(file).apns.json"), context: Self.context(focus: true))
        #expect(mapped.alerting.shouldAlert == alerts)
        #expect(mapped.alerting.suppressedByFocus == (file == "message"))
    }

    @Test("Payload size: 4096 bytes are accepted, 4097 refused")
    func sizeLimit() throws {
        func payload(_ size: Int) -> Data {
            let prefix = #"{"aps":{"alert":""#, suffix = #""}}"#
            return Data((prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix).utf8)
        }
        #expect(payload(4096).count == 4096)
        _ = try APNsPayload.map(payload(4096), context: Self.context())
        #expect(throws: APNsPayload.Invalid.self) { try APNsPayload.map(payload(4097), context: Self.context()) }
    }

    @Test("Bad payloads say what is wrong", arguments: [
        ("background-only", "background push"),
    ])
    func badFixture(file: String, reason: String) throws {
        do {
            _ = try APNsPayload.map(TestFixtures.data("apns/\(file).apns.json"), context: Self.context())
            Issue.record("\(file) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }

    @Test("Malformed payloads are refused with a reason", arguments: [
        (#"[]"#, "not a JSON object"),
        (#"{"alert": "x"}"#, "no \"aps\""),
        (#"{"aps": {"sound": "default"}}"#, "no alert"),
        (#"{"aps": {"alert": 3}}"#, "string or a dictionary"),
        (#"{"aps": {"alert": {"launch-image": "a.png"}}}"#, "no title, subtitle or body"),
        (#"{"aps": {"alert": "x", "category": "NOPE"}}"#, "category \"NOPE\""),
        (#"{"aps": {"alert": "x", "interruption-level": "loud"}}"#, "interruption-level \"loud\""),
        (#"{"aps": {"alert": {"loc-key": "MESSAGE_BODY", "loc-args": ["only one"]}}}"#, "needs argument 2"),
        (#"{"aps": {"alert": {"loc-key": "%d items"}}}"#, "format other than"),
    ])
    func malformed(json: String, reason: String) throws {
        do {
            _ = try APNsPayload.map(Data(json.utf8), context: Self.context())
            Issue.record("\(json) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }
}
