import Foundation

/// A realistic handful for the golden vectors and the tests, and a typical notification for the
/// benchmark and `phone load`. The demo forwards the larger corpus in Fixtures/corpus instead.
public enum SampleNotifications {
    public static func demo(now: Date) -> [HostOperation] {
        var anna1 = HostNotification(source: "com.apple.MobileSMS", id: "msg-4711", sourceName: "Messages", title: "Anna Schmidt", body: "Are we still on for lunch? 🍜", thread: "chat-anna")
        anna1.actions = [
            .init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"),
            .init(id: "com.apple.dismiss", title: "Dismiss", type: .dismiss),
        ]
        var anna2 = HostNotification(source: "com.apple.MobileSMS", id: "msg-4712", sourceName: "Messages", title: "Anna Schmidt", body: "I booked a table at 12:30 👍", thread: "chat-anna")
        anna2.actions = anna1.actions

        var call = HostNotification(source: "com.apple.mobilephone", id: "call-2203", sourceName: "Phone", title: "Mum", subtitle: "mobile", body: "Incoming call")
        call.actions = [
            .init(id: "accept", title: "Accept", type: .background),
            .init(id: "decline", title: "Decline", type: .dismiss),
        ]

        var dentist = HostNotification(source: "com.apple.mobilecal", id: "event-88", sourceName: "Calendar", title: "Dentist", body: "In 15 minutes · Praxis Dr. Weiß, Hauptstraße 5")
        dentist.attributes = [.timeSensitive]
        dentist.displayDate = .init(kind: .content, date: now.addingTimeInterval(15 * 60))

        let yamada = HostNotification(source: "jp.naver.line", id: "line-99", sourceName: "LINE", title: "山田太郎", body: "明日の会議は10時からです。よろしくお願いします 📅", thread: "yamada")
        let layla = HostNotification(source: "net.whatsapp.WhatsApp", id: "wa-501", sourceName: "WhatsApp", title: "ليلى", body: "مرحبا! هل وصلت إلى المحطة؟ 🚉", thread: "layla")

        var family = HostNotification(source: "com.apple.MobileSMS", id: "msg-4713", sourceName: "Messages", title: "Family 👨‍👩‍👧‍👦", thread: "chat-family")
        family.bodyRuns = [
            .init(text: "Look who learned to wave ", glyph: nil),
            .init(text: nil, glyph: .init(id: "genmoji-wave-7", description: "waving baby genmoji", image: nil)),
            .init(text: " 👋🏽🇩🇪", glyph: nil),
        ]

        var anna2Edited = anna2
        anna2Edited.body = "I booked a table at 12:45 👍 (edited)"

        let call2 = HostAlerting(shouldAlert: true, canAlert: true, kind: .incomingCall, sound: .init(ignoreSilentMode: true))
        return [
            .add(anna1, .standard),
            .add(anna2, .standard),
            .add(call, call2),
            .add(dentist, .standard),
            .add(yamada, .standard),
            .add(layla, HostAlerting(shouldAlert: false, canAlert: true, suppressedByFocus: true)),
            .add(family, .standard),
            .update(anna2Edited),
            .remove(source: "com.apple.mobilephone", id: "call-2203"),
        ]
    }

    /// A typical notification of about 300 bytes serialised, for the benchmark.
    /// - Parameter run: keeps ids unique across load runs against the same accessory.
    public static func typical(index: Int, run: String = "bench") -> HostOperation {
        var message = HostNotification(
            source: "com.apple.MobileSMS",
            id: "\(run)-\(index)",
            sourceName: "Messages",
            title: "Anna Schmidt",
            body: "Running ten minutes late, the train stopped outside the station again. Order for me if the waiter comes: the lunch special and a sparkling water, please! See you soon 🙂",
            thread: "chat-anna"
        )
        message.actions = [
            .init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"),
            .init(id: "com.apple.dismiss", title: "Dismiss", type: .dismiss),
        ]
        return .add(message, .standard)
    }
}
