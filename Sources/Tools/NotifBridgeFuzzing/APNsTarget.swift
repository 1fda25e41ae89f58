import Foundation
import NotifBridgeHostCore
import NotifBridgeWire

/// JSON from an app's server and from a service extension: APNs payloads mapped as iOS would,
/// and a service extension's output applied to a payload.
enum APNsTarget {
    /// What `phone send --categories Fixtures/apns/categories.json --strings …` would use.
    static let context = APNsPayload.Context(
        source: "com.example.app",
        sourceName: "Example",
        id: "fuzz-1",
        categories: [
            "MESSAGE": [.init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"), .init(id: "like", title: "👍", type: .background)],
            "CODE": [.init(id: "copy", title: "Copy code", type: .background)],
        ],
        strings: [
            "NEW_MESSAGE_FROM": "Message from %@",
            "MESSAGE_BODY": "%1$@ sent you %2$@ photos",
            "PERCENT": "100%% %@",
        ]
    )

    /// The first byte picks the mode: bit 0 clear maps the rest as an APNs payload (bit 1: a
    /// Focus is on); set, it applies the rest as service-extension output to a fixed payload.
    static func run(_ bytes: [UInt8]) {
        guard let mode = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if mode & 1 == 0 {
            var context = Self.context
            context.focus = mode & 2 != 0
            guard let mapped = try? APNsPayload.map(Data(rest), context: context) else { return }
            check(mapped)
        } else {
            guard let rewrite = try? ServiceExtension.Rewrite.parse(rest), let (mapped, _) = try? ServiceExtension.apply(rewrite, to: original) else { return }
            check(mapped)
        }
    }

    /// A payload with mutable content, as service extensions receive it.
    private static let original: APNsPayload.Mapped = {
        let payload = #"{"aps":{"alert":{"title":"Anna","body":"📷 Photo"},"category":"MESSAGE","mutable-content":1}}"#
        do {
            return try APNsPayload.map(Data(payload.utf8), context: Self.context)
        } catch {
            preconditionFailure("the fixed payload does not map: \(error)")
        }
    }()

    /// A mapped notification has something to show, keeps iOS's dismiss action last, and
    /// serialises into an event that decodes back to itself.
    private static func check(_ mapped: APNsPayload.Mapped) {
        let notification = mapped.notification
        precondition(notification.title != nil || notification.subtitle != nil || notification.body != nil, "a notification with nothing to show")
        precondition(notification.actions?.last?.id == APNsPayload.dismissActionIdentifier, "the dismiss action is missing")
        var event = HostEvent()
        event.sequence = 1
        do {
            event.event = try DataProvider.event(for: mapped.operation, now: Date(timeIntervalSince1970: 1_778_490_000))
        } catch {
            // Attachments from a service extension may still be refused here, by name.
            return
        }
        let decoded = try? WireCodec.decode(HostEvent.self, from: WireCodec.encode(event))
        precondition(decoded == event, "an event changed through its wire form")
    }
}
