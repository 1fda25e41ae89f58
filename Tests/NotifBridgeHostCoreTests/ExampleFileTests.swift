import Foundation
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

/// The operation files under Examples/ that the README tells people to pass to `phone --file`.
@Suite("Example operation files")
struct ExampleFileTests {
    static func operations(_ name: String) throws -> [HostOperation] {
        let url = TestFixtures.directory.deletingLastPathComponent().appendingPathComponent("Examples/\(name)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode([HostOperation].self, from: Data(contentsOf: url))
    }

    @Test("Every operation file parses as `phone --file` reads it", arguments: ["notifications.json", "replies.json"])
    func parses(name: String) throws {
        #expect(try !Self.operations(name).isEmpty)
    }

    /// README "Acting on notifications" replies to, acts on, dismisses and clears these.
    @Test("replies.json holds the notifications and actions the README's respond commands name")
    func repliesMatchTheReadme() throws {
        var actions: [String: [String]] = [:]
        for case .add(let notification, _) in try Self.operations("replies.json") {
            actions["\(notification.source)/\(notification.id)"] = (notification.actions ?? []).map(\.id)
        }
        #expect(actions == [
            "com.apple.MobileSMS/msg-4711": ["reply", "com.apple.dismiss"],
            "com.apple.MobileSMS/msg-4712": ["reply", "com.apple.dismiss"],
            "com.apple.mobilephone/call-2203": ["accept", "decline"],
        ])
    }
}
