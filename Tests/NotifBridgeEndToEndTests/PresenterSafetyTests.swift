import Foundation
@testable import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeDisplay
import NotifBridgeWire
import Testing

/// Peer text reaches the terminal of whoever runs the accessory: no presenter may pass on a
/// control or an unclosed bidi scope from it.
@Suite("Presenters show hostile text safely")
struct PresenterSafetyTests {
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[31mRED\u{9B}2J\u{7F}\u{202E}tfel\rX"

    static func record(_ text: String = hostile) -> StoredNotification {
        var n = WireNotification()
        n.id = .with { $0.sourceIdentifier = "com.evil\u{1B}[2J"; $0.notificationIdentifier = "n1\u{202E}" }
        n.sourceName = "Evil\u{1B}[5m"
        n.title = text
        n.subtitle = text
        n.body = .with { $0.runs = [.with { $0.text = text + "\nfake line" }] }
        n.actions = [.with { $0.identifier = "a\u{1B}"; $0.title = text; $0.type = .background }]
        return StoredNotification(
            notification: n, alerting: nil, removed: false,
            revision: Revision(epoch: 1, sequence: 1), receivedAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0),
            alertDecision: AlertDecision(presentation: .alert, sound: .normal, haptic: .tap, persistent: false, reason: "iOS recommends alerting")
        )
    }

    /// No C0 control but the presenter's own newlines, no DEL or C1, and every line leaves no
    /// bidi embedding, override or isolate open.
    static func isTerminalSafe(_ output: String) -> Bool {
        output.split(separator: "\n", omittingEmptySubsequences: false).allSatisfy { line in
            var depth = 0
            for scalar in line.unicodeScalars {
                switch scalar.value {
                case 0x00...0x1F, 0x7F...0x9F: return false
                case 0x202A, 0x202B, 0x202D, 0x202E, 0x2066...0x2068: depth += 1
                case 0x202C, 0x2069: depth -= 1
                default: break
                }
            }
            return depth == 0
        }
    }

    @Test("readable lines, with and without a display box, for every change", arguments: [nil, DisplayProfile(spec: "4x32")])
    func terminalLines(profile: DisplayProfile?) {
        for change in [PresenterEvent.Change.added, .updated, .removed] {
            let output = TerminalPresenter.render(Self.record(), change: change, profile: profile)
            #expect(Self.isTerminalSafe(output), "\(change): \(output.debugDescription)")
            #expect(!output.contains("\n fake line") && !output.contains("\nfake line"), "a body line break must not start an unindented line")
        }
    }

    @Test("every other event that carries peer text")
    func otherEvents() {
        let events: [PresenterEvent] = [
            .connected(peer: Self.hostile), .disconnected(peer: Self.hostile),
            .ignored(source: Self.hostile, id: Self.hostile, reason: Self.hostile),
            .refused(detail: Self.hostile), .resync(reason: Self.hostile),
            .advertising(adapter: "hci0", name: Self.hostile, suite: "XWing", keyID: "00"),
        ]
        for event in events {
            let output = TerminalPresenter.line(for: event)
            #expect(Self.isTerminalSafe(output), "\(event): \(output.debugDescription)")
        }
    }

    @Test("respond list shows each field safely")
    func respondList() {
        let listed = ListedNotification(
            source: Self.hostile, id: Self.hostile, app: Self.hostile, title: Self.hostile, body: Self.hostile + "\nfake line",
            actions: [.init(id: Self.hostile, title: Self.hostile, type: "background")], alerted: true, receivedAt: Date()
        )
        let output = listed.terminalLines.joined(separator: "\n")
        #expect(Self.isTerminalSafe(output), "\(output.debugDescription)")
        #expect(output.contains("\n    fake line"))
    }

    @Test("--json keeps the exact text, with controls escaped in the JSON")
    func json() throws {
        let line = try #require(JSONPresenter.line(for: .notification(Self.record(), change: .added)))
        #expect(Self.isTerminalSafe(line))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["title"] as? String == Self.hostile)
        #expect(object["body"] as? String == Self.hostile + "\nfake line")
        #expect(object["source"] as? String == "com.evil\u{1B}[2J")
    }

    @Test("The listening line puts an IPv6 address in brackets, so the port stands apart", arguments: [
        ("127.0.0.1", "listening on 127.0.0.1:7420 (XWing, key 0011)"), ("::1", "listening on [::1]:7420 (XWing, key 0011)"),
    ])
    func listeningLine(host: String, expected: String) {
        #expect(TerminalPresenter.line(for: .listening(host: host, port: 7420, suite: "XWing", keyID: "0011")) == expected)
    }
}
