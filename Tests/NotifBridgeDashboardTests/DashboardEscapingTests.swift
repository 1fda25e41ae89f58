import Foundation
import NotifBridgeWire
import Testing
@testable import NotifBridgeDashboard

/// swift-mustache escapes by `Character`, and a quote followed by a combining mark is one
/// `Character` its table does not hold: the quote went out raw, and notification text added
/// attributes (`hidden`, `id=state`) to its list item.
extension DashboardServerTests {
    static let markup: [String] = ["\"", "'", "<", ">", "&"]

    @Test("HTML's five characters are escaped by scalar", arguments: [
        ("\"\u{301}", "&quot;\u{301}"), ("'\u{200D}", "&#39;\u{200D}"), ("<\u{301}b>", "&lt;\u{301}b&gt;"),
        ("&\u{FE0F}amp;", "&amp;\u{FE0F}amp;"), ("a\u{301}\"", "a\u{301}&quot;"), ("", ""), ("é", "é"),
    ])
    func scalarEscaping(text: String, escaped: String) {
        #expect(Array(DashboardTemplates.ScalarHTML().escapeText(text).unicodeScalars) == Array(escaped.unicodeScalars))
    }

    @Test("Peer text joined to a combining mark is escaped in every place the pages show it", arguments: ["\u{301}", "\u{200D}", "\u{FE0F}"])
    func joinedMarksEscaped(mark: String) async throws {
        let hostile = Self.markup.map { $0 + mark + " id=state hidden" }.joined(separator: " ")
        let source = "com.example.chat\"" + mark, id = "n'" + mark
        try await Self.withDashboard(store: { store in
            try Self.storeNotification(store) {
                $0.id = WireNotificationID(source: source, notification: id)
                $0.sourceName = hostile
                $0.title = hostile
                $0.subtitle = hostile
                $0.body = .with { $0.runs = [.with { $0.text = hostile }] }
                $0.actions = [.with { $0.identifier = "reply\"" + mark; $0.title = hostile; $0.type = .textInput; $0.placeholder = hostile }]
            }
        }) { running in
            let query = "source=\(Self.percentEncoded(source))&id=\(Self.percentEncoded(id))"
            for path in ["/", "/notification?\(query)", "/?q=\(Self.percentEncoded(hostile))"] {
                let page = try await Self.request(running, path, headers: [Self.bearer(running)])
                #expect(page.status == 200, "\(path)")
                let scalars = Array(page.body.unicodeScalars)
                for character in Self.markup {
                    let raw = scalars.contains(Array((character + mark).unicodeScalars))
                    #expect(!raw, "\(path): a raw \(character) joined to U+\(String(mark.unicodeScalars.first!.value, radix: 16, uppercase: true))")
                }
                let escaped = scalars.contains(Array(("&quot;" + mark).unicodeScalars))
                #expect(escaped, "\(path): the title is on the page, escaped")
            }
        }
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}
