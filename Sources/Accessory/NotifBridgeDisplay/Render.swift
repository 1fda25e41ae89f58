/// Lays a notification out on a small screen: the title first, then the body, every line at most
/// `profile.columns` cells wide and never more than `profile.lines` lines.
///
/// - The title is one paragraph (its newlines become spaces) and may use `profile.titleLines` lines,
///   or all of them when there is no body. The body gets the lines the title did not use; when
///   `titleLines == lines` and the title fills them, the body is not shown.
/// - Runs of spaces and tabs collapse to one space; newlines in the body start a new line, but blank
///   lines are dropped because vertical space is the scarcest thing on these screens. Controls other
///   than whitespace are removed; no-break spaces are kept and never broken at.
/// - Lines break at a space when the next word fits on a line of its own, otherwise between
///   grapheme clusters. A single cluster wider than the whole line (an emoji or ideograph on a
///   one-column screen) is shown as "…".
/// - When text does not fit, its last allowed line is refilled from the remaining text and cut at a
///   cluster boundary so that it ends with "…" within the column budget.
/// - Right-to-left text stays in logical order; the display's bidi engine reorders it.
public func render(title: String?, body: String?, profile: DisplayProfile) -> [String] {
    let heading = title.map { collapsingSpaces($0[...]) } ?? ""
    let paragraphs = body.map(bodyParagraphs) ?? []
    let titleBudget = paragraphs.isEmpty ? profile.lines : profile.titleLines
    let titleLines = heading.isEmpty ? [] : wrap([heading], columns: profile.columns, maxLines: titleBudget)
    let bodyLines = wrap(paragraphs, columns: profile.columns, maxLines: profile.lines - titleLines.count)
    return titleLines + bodyLines
}

/// Whitespace that may become a line break: single-scalar White_Space (and CR LF) except the no-break
/// spaces, whose job is to keep their neighbours together. A space carrying a combining mark is a
/// visible glyph, not a break.
func isBreakingSpace(_ character: Character) -> Bool {
    guard character.isWhitespace else { return false }
    if character == "\r\n" { return true }
    guard character.unicodeScalars.count == 1, let scalar = character.unicodeScalars.first else { return false }
    switch scalar.value {
    case 0x00A0, 0x2007, 0x202F: return false
    default: return true
    }
}

/// Controls that are not whitespace (BEL, ESC, …) would draw as garbage or nothing; CR LF is a newline.
private func isStrayControl(_ character: Character) -> Bool {
    guard !character.isWhitespace, let first = character.unicodeScalars.first else { return false }
    return first.properties.generalCategory == .control
}

private func bodyParagraphs(_ body: String) -> [String] {
    body.split(whereSeparator: \.isNewline)
        .map { collapsingSpaces($0) }
        .filter { !$0.isEmpty }
}

/// Words joined by single spaces, without leading or trailing space and without stray controls.
/// Newlines count as spaces here, which is what makes a title one paragraph.
private func collapsingSpaces(_ text: Substring) -> String {
    text.split(whereSeparator: isBreakingSpace)
        .map { $0.filter { !isStrayControl($0) } }
        .filter { !$0.isEmpty }
        .joined(separator: " ")
}

/// Fills at most `maxLines` lines from `paragraphs`, each starting a new line. When anything is left
/// over, the last line is cut from all the remaining text of its paragraph, so it shows as much as
/// fits before the "…", rather than only the words that happened to wrap onto it.
func wrap(_ paragraphs: [String], columns: Int, maxLines: Int) -> [String] {
    guard maxLines > 0 else { return [] }
    var lines: [String] = []
    for (index, paragraph) in paragraphs.enumerated() {
        var rest = paragraph[...]
        while !rest.isEmpty {
            let (line, remainder) = nextLine(rest, columns: columns)
            let moreFollows = !remainder.isEmpty || index < paragraphs.count - 1
            if lines.count == maxLines - 1 && moreFollows {
                lines.append(ellipsized(remainder.isEmpty ? line[...] : rest, toWidth: columns))
                return lines
            }
            lines.append(line)
            rest = remainder
        }
    }
    return lines
}

/// Takes one line from `text`, which holds words separated by single spaces and does not start with a
/// space. Always consumes at least one cluster, so wrapping terminates.
private func nextLine(_ text: Substring, columns: Int) -> (line: String, rest: Substring) {
    var used = 0
    var lastSpace: Substring.Index?
    var index = text.startIndex
    while index < text.endIndex {
        let next = used + clusterWidth(text[index])
        if next > columns { return breakLine(text, overflowingAt: index, lastSpace: lastSpace, columns: columns) }
        if text[index] == " " { lastSpace = index }
        used = next
        index = text.index(after: index)
    }
    return (String(text), text[text.endIndex...])
}

/// Chooses where to end a line whose cluster at `overflow` does not fit.
private func breakLine(
    _ text: Substring, overflowingAt overflow: Substring.Index, lastSpace: Substring.Index?, columns: Int
) -> (line: String, rest: Substring) {
    if text[overflow] == " " {
        return (trimmingSpaces(text[..<overflow]), droppingSpaces(text[overflow...]))
    }
    if let lastSpace {
        let wordStart = text.index(after: lastSpace)
        let wordEnd = text[wordStart...].firstIndex(of: " ") ?? text.endIndex
        if displayWidth(of: text[wordStart..<wordEnd]) <= columns {
            return (trimmingSpaces(text[..<lastSpace]), text[wordStart...])
        }
    }
    if overflow == text.startIndex {
        return (ellipsis, droppingSpaces(text[text.index(after: overflow)...]))
    }
    return (trimmingSpaces(text[..<overflow]), droppingSpaces(text[overflow...]))
}

private func trimmingSpaces(_ text: Substring) -> String {
    var text = text
    while text.last == " " { text.removeLast() }
    return String(text)
}

private func droppingSpaces(_ text: Substring) -> Substring {
    text.drop { $0 == " " }
}
