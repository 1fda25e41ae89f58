import Foundation
import NotifBridgeANCS
import Testing

/// Replays `Tests/Vectors/ancs/*.hex`: byte-level exchanges any ANCS client implementation
/// (this one, or firmware) should reproduce.
@Suite("ANCS golden vectors")
struct ANCSVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Vectors/ancs").standardizedFileURL

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".hex") }.sorted()
    }

    @Test("The vectors are there")
    func present() {
        #expect(Self.files.count >= 3)
    }

    @Test("Each vector replays", arguments: files)
    func replay(_ name: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
        var client = ANCSClient()
        let now = ContinuousClock.now
        var actions: [ANCSClient.Action] = []
        var writes: [[UInt8]] = []
        var reports: [String] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else {
                Issue.record("\(name): a line without a label")
                continue
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch line[..<colon] {
            case "ns": actions += client.receivedNotificationSource(hex(value), now: now)
            case "ds": actions += client.receivedDataSource(hex(value), now: now)
            case "cp": writes.append(hex(value))
            case "added": reports.append("added \(value)")
            case "removed": reports.append("removed \(value)")
            default: Issue.record("\(name): unknown label \(line[..<colon])")
            }
        }
        #expect(actions.writes == writes, "\(name)")
        #expect(actions.refusals.isEmpty, "\(name)")
        let reported = actions.compactMap { action -> String? in
            switch action {
            case .added(let notification): "added \(notification.uid) \(notification.title)"
            case .removed(let uid, _): "removed \(uid)"
            default: nil
            }
        }
        #expect(reported == reports, "\(name)")
    }
}
