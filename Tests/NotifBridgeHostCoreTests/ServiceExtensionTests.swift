import Foundation
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

@Suite("Notification service extension rules")
struct ServiceExtensionTests {
    static let png = HostNotification.FileInput(type: "public.png", base64: Data(ImageCheck.pngSignature).base64EncodedString())

    /// The secret-message fixture as iOS maps it: title, body, thread, sound, mutable-content.
    static func secret() throws -> APNsPayload.Mapped {
        try APNsPayload.map(TestFixtures.data("apns/secret-message.apns.json"), context: APNsPayloadTests.context())
    }

    static func bytes(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test("Only mutable-content payloads go to the extension")
    func runsOnlyForMutableContent() throws {
        #expect(ServiceExtension.runs(for: try Self.secret()))
        let plain = try APNsPayload.map(TestFixtures.data("apns/meeting-time-sensitive.apns.json"), context: APNsPayloadTests.context())
        #expect(!ServiceExtension.runs(for: plain))
    }

    struct RewriteCase: Sendable, CustomTestStringConvertible {
        var output: String
        var title: String?
        var subtitle: String?
        var body: String?
        var attachments: Int?
        var changed: [String]
        var testDescription: String { output }
    }

    @Test("A rewrite changes only what it names; the identity, thread, actions and alerting stay", arguments: [
        RewriteCase(output: #"{"body": "Meet me at 7"}"#, title: "Secret Message!", body: "Meet me at 7", changed: ["body"]),
        RewriteCase(output: #"{"title": "Anna", "subtitle": "decrypted", "body": "Hi 👋🏽"}"#, title: "Anna", subtitle: "decrypted", body: "Hi 👋🏽", changed: ["title", "subtitle", "body"]),
        RewriteCase(output: #"{"body": ""}"#, title: "Secret Message!", body: nil, changed: ["body"]),
        RewriteCase(output: #" {} "#, title: "Secret Message!", body: "(Encrypted)", changed: []),
        RewriteCase(output: #"{"title": "Secret Message!"}"#, title: "Secret Message!", body: "(Encrypted)", changed: []),
        RewriteCase(output: #"{"attachments": [{"type": "public.png", "base64": "iVBORw0KGgo="}]}"#, title: "Secret Message!", body: "(Encrypted)", attachments: 1, changed: ["attachments"]),
        RewriteCase(output: #"{"attachments": []}"#, title: "Secret Message!", body: "(Encrypted)", changed: []),
    ])
    func rewrite(_ rewriteCase: RewriteCase) throws {
        let original = try Self.secret()
        let (result, outcome) = ServiceExtension.resolve(original, completion: .exited(status: 0, output: Self.bytes(rewriteCase.output), outputTruncated: false))
        #expect(outcome == .rewritten(changed: rewriteCase.changed))
        let n = result.notification
        #expect(n.title == rewriteCase.title)
        #expect(n.subtitle == rewriteCase.subtitle)
        #expect(n.body == rewriteCase.body)
        #expect(n.attachments?.count == rewriteCase.attachments)
        #expect(n.source == original.notification.source && n.id == original.notification.id && n.sourceName == original.notification.sourceName)
        #expect(n.thread == "chat-anna")
        #expect(n.actions == original.notification.actions)
        #expect(n.attributes == original.notification.attributes)
        #expect(result.alerting == original.alerting)
    }

    @Test("A rewrite replaces body runs (a genmoji body) with its plain body")
    func replacesBodyRuns() throws {
        var original = try Self.secret()
        original.notification.bodyRuns = [.init(text: "old", glyph: nil)]
        let (result, changed) = try ServiceExtension.apply(.init(body: "new"), to: original)
        #expect(result.notification.bodyRuns == nil)
        #expect(result.notification.body == "new")
        #expect(changed == ["body"])
        let (same, unchanged) = try ServiceExtension.apply(.init(attachments: [Self.png]), to: original)
        #expect(same.notification.bodyRuns == original.notification.bodyRuns)
        #expect(unchanged == ["attachments"])
    }

    @Test("Output that cannot be used falls back to the original content, saying why", arguments: [
        ("", "printed nothing"),
        ("  \n", "printed nothing"),
        ("Meet me at 7", "not a JSON object"),
        (#"["body"]"#, "not a JSON object"),
        (#""body""#, "not a JSON object"),
        (#"{"body": 7}"#, "\"body\" must be a string"),
        (#"{"body": null}"#, "\"body\" must be a string"),
        (#"{"thread-id": "other"}"#, "\"thread-id\" cannot be set"),
        (#"{"category": "SECRET", "body": "x"}"#, "\"category\" cannot be set"),
        (#"{"interruptionLevel": "critical"}"#, "\"interruptionLevel\" cannot be set"),
        (#"{"title": "", "body": ""}"#, "no title, subtitle or body"),
        (#"{"attachments": {"type": "public.png"}}"#, "must be an array"),
        (#"{"attachments": [{"base64": "iVBORw0KGgo="}]}"#, "attachment 1 needs a uniform type"),
        (#"{"attachments": [{"type": "public.png", "base64": "not base64!"}]}"#, "attachment 1 needs non-empty base64"),
        (#"{"attachments": [{"type": "public.png", "base64": ""}]}"#, "attachment 1 needs non-empty base64"),
        (#"{"attachments": [{"type": "public.png", "base64": "iVBORw0KGgo=", "url": "file:///x"}]}"#, "unknown key \"url\""),
    ])
    func invalidOutput(output: String, reason: String) throws {
        let original = try Self.secret()
        let (result, outcome) = ServiceExtension.resolve(original, completion: .exited(status: 0, output: Self.bytes(output), outputTruncated: false))
        guard case .original(.invalidOutput(let detail)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(detail.contains(reason), "\(detail)")
        #expect(result.notification == original.notification)
    }

    @Test("Invalid UTF-8 and over-long output are refused")
    func invalidBytes() throws {
        let original = try Self.secret()
        let (_, badUTF8) = ServiceExtension.resolve(original, completion: .exited(status: 0, output: [0x7B, 0x22, 0x62, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], outputTruncated: false))
        #expect(badUTF8 == .original(.invalidOutput("it is not a JSON object")))
        let (_, truncated) = ServiceExtension.resolve(original, completion: .exited(status: 0, output: Self.bytes(#"{"body": "x"}"#), outputTruncated: true))
        #expect(truncated == .original(.invalidOutput("more than \(ServiceExtension.maxOutputLength) bytes")))
        let long = [UInt8](repeating: 0x20, count: ServiceExtension.maxOutputLength + 1)
        #expect(throws: ServiceExtension.Invalid.self) { try ServiceExtension.Rewrite.parse(long) }
    }

    @Test("A failed, killed, late or missing extension leaves exactly the original", arguments: [
        (ServiceExtension.Completion.exited(status: 1, output: Array(#"{"body": "ignored"}"#.utf8), outputTruncated: false), ServiceExtension.Fallback.exited(1)),
        (.signalled(9), .signalled(9)),
        (.timedOut(after: .seconds(30)), .timedOut(.seconds(30))),
        (.failed("/bin/sh: No such file or directory"), .failed("/bin/sh: No such file or directory")),
    ])
    func fallback(completion: ServiceExtension.Completion, expected: ServiceExtension.Fallback) throws {
        let original = try Self.secret()
        let (result, outcome) = ServiceExtension.resolve(original, completion: completion)
        #expect(outcome == .original(expected))
        #expect(result.notification == original.notification)
        #expect(result.alerting == original.alerting)
        #expect("\(outcome)".hasSuffix("forwarding the original content, as iOS does"))
    }
}
