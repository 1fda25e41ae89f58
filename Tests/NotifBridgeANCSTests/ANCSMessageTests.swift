import NotifBridgeANCS
import Testing

@Suite("ANCS messages")
struct ANCSMessageTests {
    struct SourceCase: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: String
        var event: ANCSNotificationSourceEvent
        var testDescription: String { name }
    }

    /// Notification Source packets as the specification lays them out: EventID, EventFlags,
    /// CategoryID, CategoryCount, NotificationUID (little-endian).
    static let sources: [SourceCase] = [
        .init(name: "incoming call, important", bytes: "00 02 01 01 00 00 00 00",
              event: .init(eventID: .added, flags: .important, category: .incomingCall, categoryCount: 1, uid: 0)),
        .init(name: "new email, third in its category", bytes: "00 00 06 03 2a 00 00 00",
              event: .init(eventID: .added, flags: [], category: .email, categoryCount: 3, uid: 42)),
        .init(name: "modified social, silent, pre-existing, both actions", bytes: "01 1d 04 02 78 56 34 12",
              event: .init(eventID: .modified, flags: [.silent, .preExisting, .positiveAction, .negativeAction], category: .social, categoryCount: 2, uid: 0x1234_5678)),
        .init(name: "removed, largest uid", bytes: "02 00 0b 00 ff ff ff ff",
              event: .init(eventID: .removed, flags: [], category: .entertainment, categoryCount: 0, uid: .max)),
    ]

    @Test("Notification Source packets parse and encode back", arguments: sources)
    func notificationSource(_ test: SourceCase) throws {
        #expect(try ANCSNotificationSourceEvent(bytes: hex(test.bytes)) == test.event)
        #expect(test.event.bytes == hex(test.bytes))
    }

    @Test("Reserved categories read as other; unknown flags are kept")
    func reservedCategory() throws {
        let event = try ANCSNotificationSourceEvent(bytes: hex("00 e0 0c 01 01 00 00 00"))
        #expect(event.category == .other)
        #expect(event.flags.rawValue == 0xE0)
    }

    @Test("Bad Notification Source packets are refused", arguments: [
        "", "00 00 00 00 01 00 00", "00 00 00 00 01 00 00 00 00", "03 00 00 00 01 00 00 00", "ff 00 00 00 01 00 00 00",
    ])
    func badSource(_ bytes: String) {
        #expect(throws: ANCSError(.malformed, "")) { try ANCSNotificationSourceEvent(bytes: hex(bytes)) }
    }

    struct RequestCase: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: String
        var request: ANCSControlPointRequest
        var testDescription: String { name }
    }

    static let requests: [RequestCase] = [
        .init(name: "GetNotificationAttributes: app id, title (max 16), message (max 32)",
              bytes: "00 2a 00 00 00 00 01 10 00 03 20 00",
              request: .notificationAttributes(uid: 42, [.appIdentifier, .title(maxLength: 16), .message(maxLength: 32)])),
        .init(name: "GetNotificationAttributes: everything the client asks",
              bytes: "00 01 00 00 00 00 01 00 01 02 00 01 03 00 04 05 06 07",
              request: .notificationAttributes(uid: 1, ANCSClient.Limits().notificationAttributes)),
        .init(name: "GetAppAttributes: display name",
              bytes: "01 63 6f 6d 2e 61 00 00",
              request: .appAttributes(appIdentifier: "com.a", [.displayName])),
        .init(name: "PerformNotificationAction: negative",
              bytes: "02 07 00 00 00 01",
              request: .performAction(uid: 7, .negative)),
    ]

    @Test("Control Point requests encode and parse back", arguments: requests)
    func controlPoint(_ test: RequestCase) throws {
        #expect(test.request.bytes == hex(test.bytes))
        #expect(try ANCSControlPointRequest(bytes: hex(test.bytes)) == test.request)
    }

    @Test("Bad Control Point writes fail with the ATT error the specification names", arguments: [
        ("", UInt8(0xA1)), ("03", 0xA0), ("ff 00", 0xA0), ("00 01 00 00", 0xA1), ("00 01 00 00 00 01 10", 0xA1),
        ("00 01 00 00 00 08", 0xA2), ("01 63 6f 6d", 0xA1), ("01 63 00 01", 0xA2), ("02 01 00 00 00", 0xA1),
        ("02 01 00 00 00 02", 0xA2), ("02 01 00 00 00 00 00", 0xA1),
    ])
    func badControlPoint(_ bytes: String, _ code: UInt8) {
        #expect(throws: ANCSError(attErrorCode: code)!) { try ANCSControlPointRequest(bytes: hex(bytes)) }
    }

    @Test("Control Point writes: maxAttributeValueLength accepted, one more refused")
    func controlPointLength() throws {
        let app = String(repeating: "a", count: 512 - 3)
        let fits = ANCSControlPointRequest.appAttributes(appIdentifier: app, [.displayName])
        #expect(fits.bytes.count == 512)
        #expect(try ANCSControlPointRequest(bytes: fits.bytes) == fits)
        let over = ANCSControlPointRequest.appAttributes(appIdentifier: app + "a", [.displayName])
        #expect(throws: ANCSError(.invalidCommand, "")) { try ANCSControlPointRequest(bytes: over.bytes) }
    }

    @Test("ATT error codes")
    func attErrors() {
        #expect(ANCSError(.unknownCommand, "").attErrorCode == 0xA0)
        #expect(ANCSError(.invalidCommand, "").attErrorCode == 0xA1)
        #expect(ANCSError(.invalidParameter, "").attErrorCode == 0xA2)
        #expect(ANCSError(.actionFailed, "").attErrorCode == 0xA3)
        #expect(ANCSError(.malformed, "").attErrorCode == nil)
        #expect(ANCSError(attErrorCode: 0xA4) == nil)
    }
}
