import NotifBridgeDisplay
import Testing

/// One grapheme cluster from the complaints that motivated the feature, with its expected width.
struct ClusterSample: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let width: Int
    var testDescription: String { name }

    static let all: [ClusterSample] = [
        .init(name: "Latin letter", text: "a", width: 1),
        .init(name: "e + combining acute", text: "e\u{301}", width: 1),
        .init(name: "thumbs up", text: "👍", width: 2),
        .init(name: "thumbs up, skin tone", text: "👍🏽", width: 2),
        .init(name: "family ZWJ sequence", text: "👨‍👩‍👧‍👦", width: 2),
        .init(name: "flag of Germany", text: "🇩🇪", width: 2),
        .init(name: "keycap one", text: "1️⃣", width: 2),
        .init(name: "CJK ideograph", text: "山", width: 2),
        .init(name: "halfwidth katakana", text: "ｱ", width: 1),
        .init(name: "fullwidth Latin", text: "Ａ", width: 2),
        .init(name: "Arabic letter", text: "م", width: 1),
        .init(name: "lone ZWJ", text: "\u{200D}", width: 0),
    ]

    /// Beyond the brief's list: text-style emoji, bare keycaps, Hangul, Hebrew and invisible clusters.
    static let more: [ClusterSample] = [
        .init(name: "copyright, text style", text: "©", width: 1),
        .init(name: "copyright + VS16", text: "©️", width: 2),
        .init(name: "keycap without VS16", text: "1\u{20E3}", width: 2),
        .init(name: "rainbow flag (VS16 + ZWJ)", text: "🏳️‍🌈", width: 2),
        .init(name: "eye in speech bubble (ZWJ, no VS16)", text: "👁\u{200D}🗨", width: 2),
        .init(name: "Hangul syllable", text: "한", width: 2),
        .init(name: "Hiragana", text: "あ", width: 2),
        .init(name: "Hebrew letter", text: "ש", width: 1),
        .init(name: "Devanagari conjunct with ZWJ", text: "क्\u{200D}", width: 1),
        .init(name: "ellipsis", text: "…", width: 1),
        .init(name: "CR LF", text: "\r\n", width: 0),
        .init(name: "soft hyphen", text: "\u{AD}", width: 0),
    ]
}

@Suite("Display width and truncation")
struct DisplayWidthTests {
    @Test("A grapheme cluster has its expected display width", arguments: ClusterSample.all + ClusterSample.more)
    func clusterWidth(sample: ClusterSample) {
        #expect(sample.text.count == 1, "the sample must be a single Character")
        #expect(displayWidth(of: sample.text) == sample.width)
    }

    @Test("Width of a string is the sum over its clusters", arguments: [
        ("", 0), ("abc", 3), ("a山👍", 5), ("e\u{301}e\u{301}", 2), ("🇩🇪🇫🇷🇮🇹", 6), ("東京 Tokyo", 10),
    ])
    func stringWidth(text: String, width: Int) {
        #expect(displayWidth(of: text) == width)
    }

    @Test("Truncating never splits a cluster and stays within the budget", arguments: ClusterSample.all)
    func truncationKeepsClusters(sample: ClusterSample) {
        let text = String(repeating: sample.text, count: 5)
        let fullWidth = displayWidth(of: text)
        let characters = Array(text)
        for budget in 0...(fullWidth + 1) {
            let result = truncate(text, toWidth: budget)
            #expect(displayWidth(of: result) <= budget, "budget \(budget)")
            if result != text && !result.isEmpty {
                var kept = Array(result)
                #expect(kept.removeLast() == "…", "budget \(budget)")
                #expect(characters.starts(with: kept), "budget \(budget): \(kept) is not a prefix")
            }
        }
        #expect(truncate(text, toWidth: fullWidth) == text)
        if fullWidth >= 2 {
            let cut = truncate(text, toWidth: fullWidth - 1)
            #expect(cut != text)
            #expect(cut.hasSuffix("…"))
        }
    }

    @Test("Truncation results for boundary budgets", arguments: [
        ("hello", 5, "hello"),
        ("hello", 4, "hel…"),
        ("hello", 1, "…"),
        ("hello", 0, ""),
        ("hello", -3, ""),
        ("hello world", 7, "hello…"),
        ("山山山", 5, "山山…"),
        ("山山山", 4, "山…"),
        ("👍🏽👍🏽", 3, "👍🏽…"),
        ("", 0, ""),
    ])
    func truncationExamples(text: String, width: Int, expected: String) {
        #expect(truncate(text, toWidth: width) == expected)
    }
}
