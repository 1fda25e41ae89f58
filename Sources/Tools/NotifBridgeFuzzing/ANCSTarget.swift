import Foundation
import NotifBridgeANCS

/// The ANCS client fed what a hostile or broken phone could send, and the phone model fed
/// Control Point writes.
enum ANCSTarget {
    /// Small limits, so that short inputs reach every one of them.
    static let limits = ANCSClient.Limits(
        maxTitleLength: 16, maxSubtitleLength: 8, maxMessageLength: 32, maxOtherAttributeLength: 24,
        maxQueuedEvents: 4, maxTrackedNotifications: 8, maxCachedAppNames: 2, replyTimeout: .seconds(5),
        maxDataSourceReplyBytes: 200
    )

    /// Each record is one input to the client, chosen by the tag's low three bits: a Notification
    /// Source packet, Data Source bytes, a tick (body: made up to 7 s before it is handed over),
    /// an action (body: action bit, UID), a failed Control Point write, or a write to the phone
    /// model. Bits 3–5 let up to 7 s pass first.
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var client = ANCSClient(limits: limits)
        var server = ANCSServer(appNames: ["com.a": "A"])
        _ = server.post(ANCSNotification(uid: 1, flags: [.positiveAction], appIdentifier: "com.a", title: "t", message: "m"))
        var reported: Set<UInt32> = []
        var now = ContinuousClock.now
        while let (tag, body) = input.record() {
            now += .seconds(Int(tag >> 3 & 0x07))
            let actions: [ANCSClient.Action]
            switch tag & 0x07 {
            case 0: actions = client.receivedNotificationSource(body, now: now)
            case 1: actions = client.receivedDataSource(body, now: now)
            case 2: actions = client.tick(now: now, made: now - .seconds(Int(body.first ?? 0) & 0x07))
            case 3:
                let uid = body.dropFirst().prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
                actions = client.perform(body.first.map { $0 & 1 == 0 ? .positive : .negative } ?? .positive, uid: uid, now: now)
            case 4: actions = client.controlPointWriteFailed("fuzz", now: now)
            default:
                check(server.handleControlPoint(body))
                continue
            }
            for action in actions { check(action, reported: &reported) }
            precondition(client.pendingCount <= limits.maxQueuedEvents + 1, "\(client.pendingCount) requests pending")
            precondition(client.trackedCount <= limits.maxTrackedNotifications, "\(client.trackedCount) notifications tracked")
            precondition(client.cachedAppNameCount <= limits.maxCachedAppNames, "\(client.cachedAppNameCount) app names cached")
        }
    }

    private static func check(_ action: ANCSClient.Action, reported: inout Set<UInt32>) {
        switch action {
        case .writeControlPoint(let bytes):
            precondition(bytes.count <= 512, "a \(bytes.count)-byte Control Point write")
            guard let request = try? ANCSControlPointRequest(bytes: bytes) else { preconditionFailure("the client wrote a request the phone cannot parse") }
            precondition(request.bytes == bytes, "a Control Point write that does not encode back")
        case .added(let notification), .modified(let notification):
            if case .modified = action { precondition(reported.contains(notification.uid), "modified before added") }
            reported.insert(notification.uid)
            check(notification)
            precondition(ANCSMapping.event(for: action, sequence: 1, receivedAt: Date(timeIntervalSince1970: 0), timeZone: TimeZone(secondsFromGMT: 0)!) != nil, "no event for a notification")
        case .removed(let uid, _):
            precondition(reported.remove(uid) != nil, "removed a UID never reported")
        case .refused:
            break
        }
    }

    private static func check(_ notification: ANCSNotification) {
        let bounded: [(String?, Int)] = [
            (notification.title, Int(limits.maxTitleLength)), (notification.subtitle, Int(limits.maxSubtitleLength)),
            (notification.message, Int(limits.maxMessageLength)), (notification.appIdentifier, limits.maxOtherAttributeLength),
            (notification.appName, limits.maxOtherAttributeLength), (notification.date, limits.maxOtherAttributeLength),
            (notification.positiveActionLabel, limits.maxOtherAttributeLength), (notification.negativeActionLabel, limits.maxOtherAttributeLength),
        ]
        for (text, limit) in bounded {
            precondition((text?.utf8.count ?? 0) <= limit, "an attribute of \(text?.utf8.count ?? 0) bytes past its limit \(limit)")
        }
    }

    private static func check(_ reply: ANCSServer.Reply) {
        if case .error(let error) = reply {
            precondition(error.attErrorCode != nil, "the phone failed a write without an ATT error: \(error)")
        }
    }
}
