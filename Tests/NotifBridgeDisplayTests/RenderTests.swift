import NotifBridgeDisplay
import Testing

/// A render call and the lines it must produce; the spec string keeps the table readable.
struct RenderCase: Sendable, CustomTestStringConvertible {
    let name: String
    var title: String?
    var body: String?
    let profile: String
    var titleLines = 1
    let expected: [String]
    var testDescription: String { name }

    func run() throws -> [String] {
        let base = try #require(DisplayProfile(spec: profile))
        let profile = try #require(DisplayProfile(lines: base.lines, columns: base.columns, titleLines: titleLines))
        return render(title: title, body: body, profile: profile)
    }
}

@Suite("Rendering to a display profile")
struct RenderTests {
    static let wrapping: [RenderCase] = [
        .init(name: "a sentence wraps at spaces",
              body: "The quick brown fox jumps over the lazy dog", profile: "5x10",
              expected: ["The quick", "brown fox", "jumps over", "the lazy", "dog"]),
        .init(name: "a word longer than the line breaks between clusters",
              body: "Supercalifragilistic", profile: "3x8",
              expected: ["Supercal", "ifragili", "stic"]),
        .init(name: "an overlong word after a short one fills the line first",
              body: "ab Supercalifragilistic", profile: "3x8",
              expected: ["ab Super", "califrag", "ilistic"]),
        .init(name: "CJK wraps by width two",
              body: "東京都は晴れです", profile: "3x6",
              expected: ["東京都", "は晴れ", "です"]),
        .init(name: "CJK on odd columns leaves a cell free and keeps the ellipsis in budget",
              body: "東京都は晴れです", profile: "3x5",
              expected: ["東京", "都は", "晴れ…"]),
        .init(name: "emoji and ZWJ sequences wrap as whole clusters",
              body: "Party 🎉🎉 with 👨‍👩‍👧‍👦 family", profile: "4x8",
              expected: ["Party", "🎉🎉", "with 👨‍👩‍👧‍👦", "family"]),
        .init(name: "flags are never split into regional indicators",
              body: "🇩🇪🇫🇷🇮🇹", profile: "2x5",
              expected: ["🇩🇪🇫🇷", "🇮🇹"]),
        .init(name: "combining marks stay on their base",
              body: "e\u{301}e\u{301}e\u{301}e\u{301}", profile: "2x3",
              expected: ["e\u{301}e\u{301}e\u{301}", "e\u{301}"]),
        .init(name: "explicit newlines break lines and blank lines are dropped",
              body: "Line one\nLine two\r\n\n\n  three  ", profile: "5x20",
              expected: ["Line one", "Line two", "three"]),
        .init(name: "runs of spaces and tabs collapse, stray controls vanish",
              body: "a   b\t\tc\u{7}d", profile: "1x20",
              expected: ["a b cd"]),
        .init(name: "a no-break space is not a break",
              body: "Call 10\u{A0}km now", profile: "2x9",
              expected: ["Call", "10\u{A0}km now"]),
        .init(name: "right-to-left text keeps logical order and is cut by width",
              body: "שלום עולם", profile: "2x5",
              expected: ["שלום", "עולם"]),
        .init(name: "a genmoji description wraps like ordinary text",
              body: "[waving baby genmoji] says hi", profile: "3x12",
              expected: ["[waving baby", "genmoji]", "says hi"]),
    ]

    static let fitting: [RenderCase] = [
        .init(name: "the title is limited to its lines and ends with an ellipsis",
              title: "Meeting with the design team about icons", body: "Bring sketches", profile: "4x12",
              expected: ["Meeting wit…", "Bring", "sketches"]),
        .init(name: "two title lines, cut at a cluster boundary",
              title: "Meeting with the design team about icons", body: "Bring sketches", profile: "4x12",
              titleLines: 2, expected: ["Meeting with", "the design…", "Bring", "sketches"]),
        .init(name: "the body gets the remaining lines and ends with an ellipsis",
              title: "Alert", body: "The quick brown fox jumps over the lazy dog", profile: "3x10",
              expected: ["Alert", "The quick", "brown fox…"]),
        .init(name: "the last line is refilled from the rest before the ellipsis",
              body: "The quick brown fox jumps over the lazy dog", profile: "4x10",
              expected: ["The quick", "brown fox", "jumps over", "the lazy…"]),
        .init(name: "more paragraphs than lines marks the last shown one",
              body: "First\nSecond\nThird", profile: "2x10",
              expected: ["First", "Second…"]),
        .init(name: "a title-only notification may use every line",
              title: "A long title with no body at all", body: nil, profile: "3x12",
              expected: ["A long title", "with no body", "at all"]),
        .init(name: "a blank title leaves every line to the body",
              title: " \n ", body: "one two three", profile: "3x5",
              expected: ["one", "two", "three"]),
        .init(name: "nothing to show renders nothing",
              title: nil, body: "  \n\n ", profile: "3x5",
              expected: []),
        .init(name: "a cluster wider than a one-column screen shows as an ellipsis",
              body: "a山", profile: "2x1",
              expected: ["a", "…"]),
        .init(name: "a title filling every title line hides the body",
              title: "Title", body: "hidden", profile: "1x10",
              expected: ["Title"]),
    ]

    @Test("Text wraps to the expected lines", arguments: wrapping)
    func wraps(example: RenderCase) throws {
        #expect(try example.run() == example.expected)
    }

    @Test("Title and body share the lines as expected", arguments: fitting)
    func fits(example: RenderCase) throws {
        #expect(try example.run() == example.expected)
    }

    @Test("A genmoji description wraps exactly like same-shaped plain words")
    func genmojiLikePlainText() {
        let profile = DisplayProfile(lines: 3, columns: 12)!
        let genmoji = render(title: nil, body: "[waving baby genmoji] says hi", profile: profile)
        let plain = render(title: nil, body: "xwaving baby genmojix says hi", profile: profile)
        #expect(genmoji.map { displayWidth(of: $0) } == plain.map { displayWidth(of: $0) })
    }
}
