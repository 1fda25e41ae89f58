/// Finds mapping keys that are not plain scalars before the YAML parser sees them. Scenario
/// files only use words as keys. Yams checks every mapping for duplicate keys by sorting them,
/// and comparing two nested keys compares everything inside them. A 2 KB file of nested
/// explicit keys (`? - ? - …`) took the parser tens of seconds (found by the scenario fuzz target).
///
/// Refused, outside quotes, comments and block scalars: the explicit key indicator `?`, a flow
/// collection used as a key (`[a]: b`, `{a: b}: c`), and an alias used as a key (`*a : b`).
enum KeyScan {
    /// The line (1-based) and the construct of the first complex key, if any.
    static func firstComplexKey(in yaml: String) -> (line: Int, what: String)? {
        var blockScalarIndent: Int?
        for (index, line) in yaml.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let bytes = Array(line.utf8)
            let indent = bytes.prefix { $0 == UInt8(ascii: " ") }.count
            if let parent = blockScalarIndent {
                if indent > parent || bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                blockScalarIndent = nil
            }
            switch scan(bytes) {
            case .complexKey(let what): return (index + 1, what)
            case .opensBlockScalar: blockScalarIndent = indent
            case .plain: break
            }
        }
        return nil
    }

    private enum LineResult {
        case plain, opensBlockScalar
        case complexKey(String)
    }

    private static func scan(_ bytes: [UInt8]) -> LineResult {
        var index = 0
        /// Where a node may start: the line start, or after `- `, `[`, `{`, `,`, `? ` or `: `.
        var atNodeStart = true
        /// The last thing outside quotes ended a flow collection or was an alias.
        var afterCollectionOrAlias: String?
        var opensBlockScalar = false
        var flowDepth = 0
        let flowIndicators: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}")]
        func isFlowIndicator(_ i: Int) -> Bool { i < bytes.count && flowIndicators.contains(bytes[i]) }
        func isBlank(_ i: Int) -> Bool { i >= bytes.count || bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t") || bytes[i] == UInt8(ascii: "\r") }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
                continue
            case UInt8(ascii: "#") where index == 0 || isBlank(index - 1):
                return opensBlockScalar ? .opensBlockScalar : .plain
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                index = endOfQuoted(bytes, from: index)
                atNodeStart = false
                afterCollectionOrAlias = nil
            case UInt8(ascii: "?") where atNodeStart && isBlank(index + 1):
                return .complexKey("an explicit key (?)")
            case UInt8(ascii: ":") where isBlank(index + 1) || isFlowIndicator(index + 1):
                if let what = afterCollectionOrAlias { return .complexKey(what) }
                atNodeStart = true
                index += 1
            case UInt8(ascii: "-") where atNodeStart && isBlank(index + 1):
                index += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                flowDepth += 1
                atNodeStart = true
                afterCollectionOrAlias = nil
                index += 1
            case UInt8(ascii: ","):
                atNodeStart = true
                afterCollectionOrAlias = nil
                index += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                flowDepth = max(0, flowDepth - 1)
                atNodeStart = false
                afterCollectionOrAlias = "a flow collection as a key"
                index += 1
            case UInt8(ascii: "*") where atNodeStart:
                // libyaml's anchor names: letters, digits, '-' and '_'.
                index += 1
                while index < bytes.count, isAnchorCharacter(bytes[index]) { index += 1 }
                atNodeStart = false
                afterCollectionOrAlias = "an alias as a key"
                continue
            default:
                // A plain scalar, tag or anchor runs to the next blank. `|` or `>` with only
                // chomping and indentation indicators after it opens a block scalar.
                let start = index
                while index < bytes.count, !isBlank(index) {
                    if bytes[index] == UInt8(ascii: ":"), isBlank(index + 1) || flowDepth > 0 && isFlowIndicator(index + 1) { break }
                    if flowDepth > 0, isFlowIndicator(index) { break }
                    index += 1
                }
                guard index > start else {
                    index += 1
                    continue
                }
                let token = bytes[start..<index]
                if let first = token.first, first == UInt8(ascii: "|") || first == UInt8(ascii: ">"),
                   token.dropFirst().allSatisfy({ $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                    opensBlockScalar = true
                }
                // After an anchor or a tag, the node itself is still to come.
                atNodeStart = token.first == UInt8(ascii: "&") || token.first == UInt8(ascii: "!")
                afterCollectionOrAlias = nil
                continue
            }
        }
        return opensBlockScalar ? .opensBlockScalar : .plain
    }

    private static func isAnchorCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    /// The index after a quoted scalar's closing quote (or the line's end). Single quotes escape
    /// themselves by doubling; double quotes with a backslash.
    private static func endOfQuoted(_ bytes: [UInt8], from start: Int) -> Int {
        let quote = bytes[start]
        var index = start + 1
        while index < bytes.count {
            if quote == UInt8(ascii: "\""), bytes[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if bytes[index] == quote {
                if quote == UInt8(ascii: "'"), index + 1 < bytes.count, bytes[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return index
    }
}
