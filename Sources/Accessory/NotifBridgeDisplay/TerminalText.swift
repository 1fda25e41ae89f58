/// Peer text made safe to print on a terminal: the one place every text presenter sends each
/// field of a notification (or anything else a peer chose) through before printing it.
///
/// Whoever sends a notification writes its text. Printed raw, ESC, CSI and OSC sequences would
/// retitle, recolour or clear the terminal of the person running the accessory, a CR would let a
/// line overwrite itself, and a bidi override would reorder whatever is printed after the field.
///
/// - C0 controls, DEL and C1 controls are shown as Swift-style escapes of their code point in
///   hexadecimal, `\u{1B}` for ESC, `\u{9B}` for the C1 CSI: visible, and never acted on.
/// - Line breaks (LF, CR, CR LF, VT, FF, NEL, U+2028, U+2029) become `lineBreak`: a space for a
///   one-line field, or a newline and an indent for a body, so a field cannot start a line that
///   looks like the presenter's own. A tab becomes a space.
/// - Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) still open at a line
///   break or at the end are closed there, innermost first (PDF, PDI), as a paragraph end would
///   close them; a closer with nothing to close is dropped. No direction leaks out of the field.
/// - Everything else passes unchanged: emoji sequences with their joiners, combining marks,
///   right-to-left text, bidi marks (LRM, RLM, ALM).
///
/// With the default one-line `lineBreak` the result is a fixed point: passing it through again
/// changes nothing (so relaying already safe lines is harmless).
public func terminalSafe(_ text: String, lineBreak: String = " ") -> String {
    // Most text needs nothing done: one read-only pass instead of building a copy.
    if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) })
        || text.unicodeScalars.allSatisfy({ if case .plain = TerminalScalar($0) { true } else { false } }) {
        return text
    }
    var output = String.UnicodeScalarView()
    var open: [BidiScope] = []
    var scalars = text.unicodeScalars[...]
    while let scalar = scalars.popFirst() {
        switch TerminalScalar(scalar) {
        case .plain:
            output.append(scalar)
        case .tab:
            output.append(" ")
        case .lineBreak:
            if scalar == "\r", scalars.first == "\n" { scalars.removeFirst() }
            close(&open, into: &output)
            output.append(contentsOf: lineBreak.unicodeScalars)
        case .control:
            output.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
        case .opens(let scope):
            open.append(scope)
            output.append(scalar)
        case .popDirectionalFormatting:
            // A PDF closes only an embedding or override opened after the innermost isolate.
            guard open.last == .embedding else { continue }
            open.removeLast()
            output.append(scalar)
        case .popDirectionalIsolate:
            // A PDI closes the innermost isolate and any embedding opened inside it.
            guard let isolate = open.lastIndex(of: .isolate) else { continue }
            open.removeSubrange(isolate...)
            output.append(scalar)
        }
    }
    close(&open, into: &output)
    return String(output)
}

/// Output of `JSONSerialization` or `JSONEncoder` with the scalars that `terminalSafe` would act
/// on escaped as `\uXXXX` too. JSON escapes only C0 controls; DEL, C1 controls, bidi controls
/// and U+2028/U+2029 may appear raw, and a person may well read JSON lines on a terminal. A
/// JSON reader still gets the exact text. Only valid for JSON text: outside strings, JSON has
/// nothing but ASCII.
public func jsonEscapingTerminalControls(_ json: String) -> String {
    var output = String.UnicodeScalarView()
    for scalar in json.unicodeScalars {
        switch TerminalScalar(scalar) {
        case .plain, .tab:
            output.append(scalar)
        case .lineBreak where scalar.isASCII:
            output.append(scalar)
        default:
            let hex = String(scalar.value, radix: 16)
            output.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
    }
    return String(output)
}

private enum BidiScope: Equatable {
    case embedding, isolate
}

private func close(_ open: inout [BidiScope], into output: inout String.UnicodeScalarView) {
    while let scope = open.popLast() {
        output.append(scope == .embedding ? "\u{202C}" : "\u{2069}")
    }
}

/// What a scalar means to a terminal.
private enum TerminalScalar {
    case plain, tab, lineBreak, control
    case opens(BidiScope)
    case popDirectionalFormatting, popDirectionalIsolate

    init(_ scalar: Unicode.Scalar) {
        switch scalar.value {
        case 0x09: self = .tab
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: self = .lineBreak
        case 0x00...0x1F, 0x7F...0x9F: self = .control
        case 0x202A, 0x202B, 0x202D, 0x202E: self = .opens(.embedding)
        case 0x2066...0x2068: self = .opens(.isolate)
        case 0x202C: self = .popDirectionalFormatting
        case 0x2069: self = .popDirectionalIsolate
        default: self = .plain
        }
    }
}
