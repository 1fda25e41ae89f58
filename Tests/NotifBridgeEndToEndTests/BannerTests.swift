import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeWire
import Testing

/// The Mac accessory's banners and what a click on one sends to the iPhone.
@Suite("Banners")
struct BannerTests {
    private static func record(actions: [Notifbridge_V1_Action], title: String? = "Anna") -> StoredNotification {
        var n = WireNotification()
        n.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "m1")
        n.sourceName = "Messages"
        if let title { n.title = title }
        n.body = .with { $0.runs = [.with { $0.text = "See you at 8" }] }
        n.actions = actions
        return StoredNotification(notification: n, alerting: nil, removed: false, revision: .init(epoch: 1, sequence: 1), receivedAt: Date(), updatedAt: Date())
    }

    private static func action(_ id: String, _ type: Notifbridge_V1_Action.TypeEnum, placeholder: String = "") -> Notifbridge_V1_Action {
        .with { $0.identifier = id; $0.title = id.capitalized; $0.type = type; $0.placeholder = placeholder }
    }

    @Test("Buttons: background and text-input actions, at most four; dismiss is the banner's close", arguments: [(4, 4), (5, 4), (3, 3)])
    func buttons(count: Int, shown: Int) {
        let actions = (0..<count).map { Self.action("a\($0)", .background) } + [Self.action("dismiss", .dismiss)]
        let banner = Banner(Self.record(actions: actions))
        #expect(banner.buttons.count == shown)
        #expect(banner.sendsDismissal)
        #expect(banner.title == "Anna" && banner.body == "See you at 8")
    }

    @Test("What a click sends", arguments: [
        (Banner.Interaction.opened, ControlRequest?.none),
        (.dismissed, ControlRequest(op: .dismiss, source: "com.apple.MobileSMS", id: "m1")),
        (.action(identifier: "like", text: nil), ControlRequest(op: .action, source: "com.apple.MobileSMS", id: "m1", action: "like")),
        (.action(identifier: "reply", text: "On my way"), ControlRequest(op: .reply, source: "com.apple.MobileSMS", id: "m1", action: "reply", text: "On my way")),
        (.action(identifier: "unknown", text: nil), nil),
    ])
    func interactions(interaction: Banner.Interaction, expected: ControlRequest?) {
        let banner = Banner(Self.record(actions: [Self.action("like", .background), Self.action("reply", .textInput, placeholder: "Message"), Self.action("dismiss", .dismiss)]))
        #expect(banner.request(for: interaction) == expected)
        #expect(banner.buttons.last?.kind == .textInput(placeholder: "Message"))
    }

    @Test("Without a dismiss action, closing the banner sends nothing; without a title, the app's name is the title")
    func noDismiss() {
        let banner = Banner(Self.record(actions: [], title: nil))
        #expect(banner.request(for: .dismissed) == nil)
        #expect(banner.title == "Messages")
    }

    @Test("Peer text on a banner: controls shown, not acted on; a bidi override closed within its field")
    func hostileText() {
        var record = Self.record(actions: [Self.action("reply", .textInput, placeholder: "\u{202E}evil")], title: "Bank\u{1B}[2J\u{202E}gnp.exe")
        record.notification.body = .with { $0.runs = [.with { $0.text = "line one\r\nline two\u{2067}" }] }
        let banner = Banner(record)
        #expect(!banner.title.unicodeScalars.contains("\u{1B}"))
        #expect(banner.title.hasSuffix("\u{202C}"), "the override is closed at the end of the title")
        #expect(banner.body == "line one\nline two\u{2067}\u{2069}")
        #expect(banner.buttons.first?.kind == .textInput(placeholder: "\u{202E}evil\u{202C}"))
    }

    @Test("Banner identifiers keep source and id apart")
    func identifiers() {
        #expect(Banner.identifier(source: "a/b", id: "c") != Banner.identifier(source: "a", id: "b/c"))
    }
}
