import Foundation
import NotifBridgeDisplay
import Testing

@Suite("Peer text on a terminal")
struct TerminalTextTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var input: String
        var expected: String
        var testDescription: String { input.debugDescription }
    }

    static let hostile: [Case] = [
        // The issue's title: an OSC retitle ended by BEL, then an SGR colour.
        Case(input: "\u{1B}]0;owned\u{07}\u{1B}[31mRED", expected: #"\u{1B}]0;owned\u{7}\u{1B}[31mRED"#),
        // OSC 8 hyperlink ended by ST (ESC \).
        Case(input: "\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\", expected: #"\u{1B}]8;;http://x\u{1B}\link\u{1B}]8;;\u{1B}\"#),
        // C1 CSI, C1 OSC with C1 ST, DEL, NUL.
        Case(input: "\u{9B}2J", expected: #"\u{9B}2J"#),
        Case(input: "\u{9D}0;t\u{9C}", expected: #"\u{9D}0;t\u{9C}"#),
        Case(input: "a\u{7F}b\u{0}", expected: #"a\u{7F}b\u{0}"#),
        // Bidi: an override left open is closed; a closer with nothing open is dropped.
        Case(input: "abc\u{202E}fed", expected: "abc\u{202E}fed\u{202C}"),
        Case(input: "abc\u{202E}fed\u{202C}ghi", expected: "abc\u{202E}fed\u{202C}ghi"),
        Case(input: "x\u{202C}y\u{2069}z", expected: "xyz"),
        Case(input: "\u{202A}\u{202B}\u{202D}a", expected: "\u{202A}\u{202B}\u{202D}a\u{202C}\u{202C}\u{202C}"),
        Case(input: "\u{2067}abc", expected: "\u{2067}abc\u{2069}"),
        Case(input: "\u{2066}a\u{202E}b", expected: "\u{2066}a\u{202E}b\u{202C}\u{2069}"),
        // A PDI also closes embeddings inside its isolate; a PDF cannot reach out of one.
        Case(input: "\u{2068}a\u{202B}b\u{2069}c", expected: "\u{2068}a\u{202B}b\u{2069}c"),
        Case(input: "\u{202E}a\u{2067}b\u{202C}c", expected: "\u{202E}a\u{2067}bc\u{2069}\u{202C}"),
        // Line breaks and tabs in a one-line field; an override ends where its line did.
        Case(input: "a\nb\r\nc\rd\u{85}e\u{2028}f\u{2029}g\u{0B}h\u{0C}i\tj", expected: "a b c d e f g h i j"),
        Case(input: "a\u{202E}b\nc", expected: "a\u{202E}b\u{202C} c"),
        Case(input: "", expected: ""),
    ]

    static let unchanged: [String] = [
        "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🧑🏻‍💻 ❤️‍🔥",
        "e\u{301} Z\u{324}\u{308} ก\u{E49}\u{E33} ḳ́",
        "مرحبا بالعالم \u{200F}(RLM) \u{200E}(LRM) \u{61C}",
        "שלום 你好 こんにちは 안녕하세요",
        #"already \u{1B} shown"#,
        "no-break\u{A0}space ~ narrow\u{202F}space \u{2065}\u{206A}",
    ]

    @Test("hostile text is shown visibly and cannot act on the terminal", arguments: hostile)
    func hostileText(_ example: Case) {
        #expect(terminalSafe(example.input) == example.expected)
    }

    @Test("emoji sequences, combining marks, scripts and bidi marks pass unchanged", arguments: unchanged)
    func unchangedText(_ text: String) {
        #expect(terminalSafe(text) == text)
        #expect(terminalSafe(text).unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    @Test("a one-line result is a fixed point", arguments: hostile.map(\.input) + unchanged)
    func idempotent(_ text: String) {
        let once = terminalSafe(text)
        #expect(terminalSafe(once) == once)
    }

    /// Each limit of each range with its neighbour outside it.
    @Test("range boundaries", arguments: [
        (UInt32(0x1F), #"\u{1F}"#), (0x20, " "),
        (0x7E, "~"), (0x7F, #"\u{7F}"#),
        (0x80, #"\u{80}"#), (0x9F, #"\u{9F}"#), (0xA0, "\u{A0}"),
        (0x2027, "\u{2027}"), (0x2028, " "), (0x2029, " "), (0x202A, "\u{202A}\u{202C}"),
        (0x202E, "\u{202E}\u{202C}"), (0x202F, "\u{202F}"),
        (0x2065, "\u{2065}"), (0x2066, "\u{2066}\u{2069}"), (0x2068, "\u{2068}\u{2069}"), (0x2069, ""), (0x206A, "\u{206A}"),
    ])
    func boundaries(scalar: UInt32, expected: String) throws {
        let text = String(Character(try #require(Unicode.Scalar(scalar))))
        #expect(terminalSafe(text) == expected)
    }

    @Test("a body keeps its lines, each indented, so none looks like the presenter's own")
    func bodyLines() {
        #expect(terminalSafe("first\nsecond\r\n● Bank — code 1234", lineBreak: "\n    ") == "first\n    second\n    ● Bank — code 1234")
    }

    @Test("JSON keeps the exact text and escapes what a terminal would act on")
    func json() throws {
        let texts = Self.hostile.map(\.input) + Self.unchanged
        let data = try JSONSerialization.data(withJSONObject: texts, options: [.withoutEscapingSlashes])
        let escaped = jsonEscapingTerminalControls(String(decoding: data, as: UTF8.self))
        let decoded = try JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String]
        #expect(decoded == texts)
        for scalar in escaped.unicodeScalars {
            let value = scalar.value
            #expect(!(value < 0x20 || (0x7F...0x9F).contains(value) || (0x2028...0x202E).contains(value) || (0x2066...0x2069).contains(value)), "raw U+\(String(value, radix: 16))")
        }
        #expect(escaped.contains("👩‍👩‍👧‍👦") && escaped.contains("مرحبا"))
    }
}
