import NotifBridgeDisplay
import Testing

/// SplitMix64 (Steele, Lea and Flood): a tiny generator with a fixed seed so every run checks the
/// same inputs and a failure reproduces exactly.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Modulo bias is irrelevant for picking test inputs.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

@Suite("Rendering properties over generated text")
struct RenderPropertyTests {
    /// Pieces that have broken receivers before; concatenating them also makes clusters merge
    /// (a lone combining mark or VS16 attaches to whatever precedes it).
    static let pieces = [
        "a", "Z", "word", "supercalifragilistic", " ", "   ", "\n", "\r\n", "\t", "\u{A0}",
        "e\u{301}", "\u{301}", "\u{FE0F}", "👍", "👍🏽", "👨‍👩‍👧‍👦", "🇩🇪", "🇫", "1️⃣", "©", "🏳️‍🌈",
        "山", "東京", "한", "ｱ", "Ａ", "م", "مرحبا", "ש", "\u{200D}", "\u{200B}", "\u{200F}", "…",
        "[waving baby genmoji]", "\u{7}",
    ]

    static func text(_ random: inout SplitMix64, maxPieces: Int) -> String? {
        let count = random.next(in: 0...(maxPieces + 1))
        guard count <= maxPieces else { return nil }
        return (0..<count).map { _ in pieces[random.next(in: 0...(pieces.count - 1))] }.joined()
    }

    /// Every cluster, minus whitespace and controls, as scalars: what must survive when nothing is cut.
    static func visibleScalars(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter {
            !$0.properties.isWhitespace && $0.properties.generalCategory != .control
        }
    }

    @Test("Every line fits the profile, for a seeded set of tricky inputs")
    func linesFit() {
        var random = SplitMix64(seed: 0x4E6F_7469_6642_7267)
        for round in 0..<2000 {
            let lines = random.next(in: 1...6)
            let profile = DisplayProfile(
                lines: lines, columns: random.next(in: 1...20), titleLines: random.next(in: 1...lines))!
            let title = Self.text(&random, maxPieces: 8)
            let body = Self.text(&random, maxPieces: 30)
            let rendered = render(title: title, body: body, profile: profile)
            let context: Comment = "round \(round), \(profile), title \(String(reflecting: title)), body \(String(reflecting: body))"
            #expect(rendered.count <= profile.lines, context)
            for line in rendered {
                #expect(displayWidth(of: line) <= profile.columns, context)
                #expect(!line.isEmpty, context)
                #expect(line.first != " " && line.last != " ", context)
                let hasNewline = line.contains { $0.isNewline }
                #expect(!hasNewline, context)
            }
            #expect(render(title: title, body: body, profile: profile) == rendered, "deterministic")
        }
    }

    @Test("When everything fits, every visible scalar survives in order")
    func nothingLost() {
        var random = SplitMix64(seed: 42)
        let roomy = DisplayProfile(lines: 1000, columns: 1000)!
        for round in 0..<500 {
            let title = Self.text(&random, maxPieces: 8)
            let body = Self.text(&random, maxPieces: 30)
            let rendered = render(title: title, body: body, profile: roomy)
            let expected = Self.visibleScalars((title ?? "") + "\n" + (body ?? ""))
            #expect(Self.visibleScalars(rendered.joined()) == expected, "round \(round)")
        }
    }
}
