import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("The fixture corpus end to end over loopback TCP", .timeLimit(.minutes(2)))
struct CorpusEndToEndTests {
    struct Key: Hashable, CustomStringConvertible {
        var source: String
        var id: String
        var description: String { "\(source)/\(id)" }
    }

    /// What the store should hold after the operations: adds, updates applied, removals gone.
    static func expectedState(_ operations: [HostOperation]) -> [Key: HostNotification] {
        var state: [Key: HostNotification] = [:]
        for operation in operations {
            switch operation {
            case .add(let notification, _): state[Key(source: notification.source, id: notification.id)] = notification
            case .update(let notification): state[Key(source: notification.source, id: notification.id)] = notification
            case .remove(let source, let id): state[Key(source: source, id: id)] = nil
            case .removeAll: state = [:]
            }
        }
        return state
    }

    @Test("Every corpus notification is stored with its text byte for byte and its icons and attachments intact")
    func wholeCorpus() async throws {
        var operations: [HostOperation] = []
        for name in try TestFixtures.corpusNames() {
            operations += try HostOperation.list(fromJSON: TestFixtures.data("corpus/\(name)"))
        }
        let directory = try TemporaryDirectory("e2e-corpus")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }

        let forwarded = operations
        let (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            return try await TestHost.forward(forwarded, over: connection)
        }
        #expect(receipts.count == operations.count)
        #expect(receipts.values.allSatisfy { $0.stored })
        #expect(accessory.presenter.refusals.isEmpty)

        let expected = Self.expectedState(operations)
        let stored = try accessory.daemon.store.notifications()
        #expect(Set(stored.map { Key(source: $0.sourceIdentifier, id: $0.notificationIdentifier) }) == Set(expected.keys))
        for record in stored {
            let key = Key(source: record.sourceIdentifier, id: record.notificationIdentifier)
            let input = try #require(expected[key])
            var want = try DataProvider.serialize(input, now: Date())
            want.deliveryDateMs = record.notification.deliveryDateMs
            #expect(record.notification == want, "\(key)")
            Self.expectSameBytes(record.notification, want, key)
        }

        let texts = stored.flatMap { [$0.notification.title, $0.notification.subtitle, $0.notification.body.plainText] }
        for sample in ["مرحبا! هل وصلت إلى المحطة؟ 🚉", "נפגשים ב־19:00 בקפה ליד הים? \u{200F}הקישור ל־Zoom בפנים 🌊", "今晚七点在老地方吃火锅，别迟到！🍲", "오늘 저녁에 시간 있어? 영화 보러 가자 🎬", "Family 👨‍👩‍👧‍👦"] {
            #expect(texts.contains { Array($0.utf8) == Array(sample.utf8) }, "\(sample)")
        }
        let photo = try TestFixtures.data("images/photo-harbour.png")
        #expect(stored.contains { $0.notification.attachments.map(\.data) == [photo] })
    }

    /// Protobuf equality compares strings as Swift does (canonical equivalence); the accessory
    /// must keep the exact UTF-8, so every text field and file is compared as bytes too.
    static func expectSameBytes(_ got: WireNotification, _ want: WireNotification, _ key: Key) {
        for (field, a, b) in [("title", got.title, want.title), ("subtitle", got.subtitle, want.subtitle), ("source name", got.sourceName, want.sourceName), ("thread", got.threadIdentifier, want.threadIdentifier)] {
            #expect(Array(a.utf8) == Array(b.utf8), "\(key) \(field)")
        }
        for (field, a, b) in [("body", got.body, want.body), ("summary", got.summary, want.summary)] {
            #expect(a.runs.count == b.runs.count, "\(key) \(field)")
            for (runA, runB) in zip(a.runs, b.runs) {
                #expect(Array(runA.text.utf8) == Array(runB.text.utf8), "\(key) \(field)")
                #expect(runA.glyph.image.data == runB.glyph.image.data, "\(key) \(field) glyph image")
            }
        }
        #expect(got.sourceIcon.data == want.sourceIcon.data, "\(key) source icon")
        #expect(got.contextIcon.data == want.contextIcon.data, "\(key) context icon")
        #expect(got.attachments.map(\.data) == want.attachments.map(\.data), "\(key) attachments")
    }
}
