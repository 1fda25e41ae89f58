/// Display width of text in cells, summed over its extended grapheme clusters (`Character`s).
public func displayWidth(of text: some StringProtocol) -> Int {
    text.reduce(0) { $0 + clusterWidth($1) }
}

/// Cuts `text` to at most `width` cells. Text that fits is returned unchanged; otherwise the result is
/// a prefix of whole `Character`s, without trailing breaking spaces, followed by "…" (one cell) and still
/// within `width`. A width below 1 leaves no room even for the ellipsis, so cut text becomes "".
public func truncate(_ text: String, toWidth width: Int) -> String {
    if displayWidth(of: text) <= width { return text }
    guard width > 0 else { return "" }
    return ellipsized(text[...], toWidth: width)
}

/// The longest prefix of whole clusters that fits in `width - 1` cells, plus "…".
/// Stops at the first cluster that does not fit so the result is always a true prefix.
func ellipsized(_ text: Substring, toWidth width: Int) -> String {
    let budget = width - 1
    var used = 0
    var end = text.startIndex
    while end < text.endIndex {
        let next = used + clusterWidth(text[end])
        if next > budget { break }
        used = next
        end = text.index(after: end)
    }
    var kept = text[..<end]
    while let last = kept.last, isBreakingSpace(last) { kept.removeLast() }
    return String(kept) + ellipsis
}

let ellipsis = "\u{2026}"

/// Width of one extended grapheme cluster: 0, 1 or 2 cells.
///
/// An approximation of UAX #11 (East Asian Width) and UTS #51 (emoji presentation), decided per
/// cluster so a cut can never fall inside an emoji sequence or between a base and its marks:
/// - 0 when every scalar is a control (Cc), a format character (Cf, such as a lone ZWJ or a bidi mark)
///   or default-ignorable (a stray variation selector).
/// - 2 for emoji presentation: the first scalar is Emoji_Presentation (this covers skin-tone
///   sequences, most ZWJ sequences and regional indicators), or an emoji base is followed by VS16
///   (U+FE0F) or a keycap (U+20E3), or emoji are joined by ZWJ, or the cluster is a flag pair.
/// - 2 when the first scalar is East Asian Wide or Fullwidth, from the ranges in `isEastAsianWide`.
/// - 1 otherwise: Latin with combining marks, Arabic, Hebrew, halfwidth katakana, and East Asian
///   Ambiguous characters such as "…", which Western fonts draw narrow.
/// Fonts and Unicode versions disagree at the edges (text-style emoji, newly added emoji, Ambiguous
/// characters in CJK fonts), so a device with its own measure should be trusted over this one.
func clusterWidth(_ cluster: Character) -> Int {
    let scalars = cluster.unicodeScalars
    guard let first = scalars.first, !scalars.allSatisfy(isInvisible) else { return 0 }
    if first.properties.isEmojiPresentation { return 2 }
    if isEastAsianWide(first.value) { return 2 }
    guard scalars.count > 1 else { return 1 }

    var regionalIndicators = 0
    var joinsEmoji = false
    var presentsAsEmoji = false
    for scalar in scalars.dropFirst() {
        switch scalar.value {
        case 0xFE0F, 0x20E3: presentsAsEmoji = true
        case 0x200D: joinsEmoji = true
        default: break
        }
        if (0x1F1E6...0x1F1FF).contains(scalar.value) { regionalIndicators += 1 }
    }
    if (0x1F1E6...0x1F1FF).contains(first.value) { regionalIndicators += 1 }
    if regionalIndicators >= 2 { return 2 }
    let emojiBase = first.properties.isEmoji
    if emojiBase && presentsAsEmoji { return 2 }
    if joinsEmoji && scalars.contains(where: isPictographic) { return 2 }
    return 1
}

private func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
    let properties = scalar.properties
    switch properties.generalCategory {
    case .control, .format: return true
    default: return properties.isDefaultIgnorableCodePoint
    }
}

/// Emoji that are pictures, not the ASCII digits, "#" and "*" that are also Emoji (keycap bases);
/// this keeps ZWJ in Indic conjuncts from counting as an emoji sequence.
private func isPictographic(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.isEmoji && !scalar.isASCII
}

/// East Asian Wide (W) and Fullwidth (F) blocks from EastAsianWidth.txt, merged into whole blocks.
/// Emoji with W width are caught earlier by Emoji_Presentation, so they are not repeated here.
private func isEastAsianWide(_ value: UInt32) -> Bool {
    switch value {
    case 0x1100...0x115F,  // Hangul Jamo leading consonants (start conjoining syllables)
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, CJK compatibility
        0x3400...0x4DBF,  // CJK Unified Ideographs Extension A
        0x4E00...0x9FFF,  // CJK Unified Ideographs
        0xA000...0xA4CF,  // Yi syllables and radicals
        0xA960...0xA97F,  // Hangul Jamo Extended-A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK Compatibility Ideographs
        0xFE10...0xFE19,  // Vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // Fullwidth ASCII variants (halfwidth katakana at FF61... stay narrow)
        0xFFE0...0xFFE6,  // Fullwidth signs
        0x16FE0...0x16FE4,  // Ideographic symbols and punctuation
        0x17000...0x18CFF,  // Tangut, Khitan
        0x1AFF0...0x1B2FF,  // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // Enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK Extensions B–F, compatibility supplement
        0x30000...0x3FFFD:  // CJK Extensions G–H
        return true
    default:
        return false
    }
}
