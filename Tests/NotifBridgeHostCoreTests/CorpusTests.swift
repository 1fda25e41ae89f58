import Foundation
@testable import NotifBridgeAccessoryCore
import NotifBridgeFixtures
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("Fixture corpus")
struct CorpusTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func operations(_ name: String) throws -> [HostOperation] {
        try HostOperation.list(fromJSON: TestFixtures.data("corpus/\(name)"))
    }

    /// The wire notification each add or update carries; nil for removals.
    static func wireNotifications(_ name: String) throws -> [WireNotification] {
        try operations(name).compactMap { operation in
            switch try DataProvider.event(for: operation, now: now) {
            case .add(let add): add.notification
            case .update(let update): update.notification
            default: nil
            }
        }
    }

    @Test("The binary embeds exactly the files in Fixtures/corpus, byte for byte")
    func embeddedMatchesDisk() throws {
        let names = try TestFixtures.corpusNames()
        #expect(!names.isEmpty)
        #expect(FixtureCorpus.files.map(\.name).sorted() == names, "list every corpus file in Fixtures/FixtureCorpus.swift")
        for file in FixtureCorpus.files {
            #expect(Data(file.bytes) == (try TestFixtures.data("corpus/\(file.name)")), "\(file.name)")
        }
        #expect(try FixtureCorpus.operations().count == names.map { try Self.operations($0).count }.reduce(0, +))
    }

    @Test("Every operation serialises and passes the accessory's own content validation", arguments: try TestFixtures.corpusNames())
    func withinContentLimits(name: String) throws {
        let operations = try Self.operations(name)
        #expect(!operations.isEmpty)
        for (index, operation) in operations.enumerated() {
            let serialised = try DataProvider.event(for: operation, now: Self.now)
            let event = HostEvent.with {
                $0.sequence = UInt64(index + 1)
                $0.event = serialised
            }
            do {
                try AccessorySession.validate(event)
            } catch {
                Issue.record("\(name) #\(index + 1) (\(operation.summaryLine)) is refused: \(error)")
            }
            let length = try (event.serializedBytes() as Data).count
            #expect(length <= WireLimits.defaultMaxMessageLength)
        }
        for notification in try Self.wireNotifications(name) {
            for icon in [notification.sourceIcon, notification.contextIcon] + glyphImages(notification) {
                #expect(icon.data.count <= ContentLimits.maxIconBytes / 4, "icons stay well within the limit")
            }
            #expect(notification.attachments.count <= ContentLimits.maxAttachments)
            for attachment in notification.attachments {
                #expect(attachment.data.count <= ContentLimits.maxAttachmentBytes / 4, "attachments stay well within the limit")
            }
        }
    }

    @Test("Every icon, glyph image and attachment is a well-formed image of its declared type", arguments: try TestFixtures.corpusNames())
    func imagesMatchTheirType(name: String) throws {
        for notification in try Self.wireNotifications(name) {
            let files = [notification.sourceIcon, notification.contextIcon] + glyphImages(notification) + notification.attachments
            for file in files where !file.data.isEmpty || !file.uniformType.isEmpty {
                #expect(ImageCheck.problem(file.data, type: file.uniformType) == nil, "\(name) \(notification.id.notificationIdentifier): \(ImageCheck.problem(file.data, type: file.uniformType) ?? "")")
            }
        }
    }

    @Test("Every \"fixture\" image reference holds the bytes of Fixtures/images (run scripts/make-fixture-images.py)", arguments: try TestFixtures.corpusNames())
    func fixtureReferencesAreCurrent(name: String) throws {
        let json = try JSONSerialization.jsonObject(with: TestFixtures.data("corpus/\(name)"))
        for (image, base64) in Self.fixtureReferences(in: json) {
            let expected = try TestFixtures.data("images/\(image)")
            #expect(Data(base64Encoded: base64) == expected, "\(name): \(image)")
        }
    }

    @Test("The images are small PNGs")
    func imagesAreSmall() throws {
        let images = try FileManager.default.contentsOfDirectory(atPath: TestFixtures.directory.appendingPathComponent("images").path)
        #expect(!images.isEmpty)
        for image in images {
            let data = try TestFixtures.data("images/\(image)")
            #expect(ImageCheck.problem(data, type: "public.png") == nil, "\(image)")
            #expect(data.count <= ContentLimits.maxIconBytes / 4, "\(image) is \(data.count) bytes")
        }
    }

    /// (image name, base64) for every object with a "fixture" key, however deep.
    static func fixtureReferences(in json: Any) -> [(String, String)] {
        switch json {
        case let object as [String: Any]:
            let own = (object["fixture"] as? String).map { [($0, object["base64"] as? String ?? "")] } ?? []
            return own + object.values.flatMap { fixtureReferences(in: $0) }
        case let array as [Any]:
            return array.flatMap { fixtureReferences(in: $0) }
        default:
            return []
        }
    }
}

/// Glyph images in the body and summary of a notification.
func glyphImages(_ notification: WireNotification) -> [Notifbridge_V1_File] {
    (notification.body.runs + notification.summary.runs).compactMap { run in
        if case .glyph(let glyph) = run.run, glyph.hasImage { return glyph.image }
        return nil
    }
}
