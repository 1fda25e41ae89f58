/// The text grid of an accessory's screen: `lines` rows of `columns` display cells.
///
/// Widths are counted in cells as `displayWidth(of:)` measures them, so a CJK ideograph or an emoji
/// takes two of the `columns`. Every value is validated on creation and on decoding, so a renderer
/// never has to guard against an empty or absurd grid.
public struct DisplayProfile: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Largest accepted number of lines or columns; anything bigger is a typo or hostile input, not a screen.
    public static let maximumDimension = 1000

    public let lines: Int
    public let columns: Int
    /// How many of `lines` the title may use when there is a body; without a body it may use all of them.
    public let titleLines: Int

    /// Returns nil unless `lines` and `columns` are in 1...1000 and `titleLines` is in 1...lines.
    public init?(lines: Int, columns: Int, titleLines: Int = 1) {
        let range = 1...Self.maximumDimension
        guard range.contains(lines), range.contains(columns), (1...lines).contains(titleLines) else { return nil }
        self.init(checkedLines: lines, columns: columns, titleLines: titleLines)
    }

    /// Parses "LINESxCOLUMNS" such as "4x32" (the separator may be "x" or "X"). Only ASCII digits are
    /// accepted: no signs, spaces or other scripts' digits, so a config typo is rejected rather than guessed.
    public init?(spec: String) {
        let parts = spec.split(separator: "x", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "X", omittingEmptySubsequences: false) }
        guard parts.count == 2, let lines = Self.dimension(parts[0]), let columns = Self.dimension(parts[1]) else {
            return nil
        }
        self.init(lines: lines, columns: columns)
    }

    private init(checkedLines lines: Int, columns: Int, titleLines: Int) {
        self.lines = lines
        self.columns = columns
        self.titleLines = titleLines
    }

    /// Four digits are enough for 1000; the length cap also keeps `Int(_:)` far from overflow.
    private static func dimension(_ text: Substring) -> Int? {
        guard (1...4).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// The profile in spec form, e.g. "4x18"; `titleLines` is not part of the spec.
    public var description: String { "\(lines)x\(columns)" }

    // MARK: Presets

    /// A small round or square watch face: 4 lines of 18 cells, one title line.
    public static let watch = DisplayProfile(checkedLines: 4, columns: 18, titleLines: 1)
    /// A shelf or desk e-ink panel: 8 lines of 40 cells; titles may take two lines.
    public static let eInk = DisplayProfile(checkedLines: 8, columns: 40, titleLines: 2)
    /// A car head-up display: 2 lines of 32 cells, so the title gets one line and the body the other.
    public static let hud = DisplayProfile(checkedLines: 2, columns: 32, titleLines: 1)

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case lines, columns, titleLines
    }

    /// Decoding validates like `init?(lines:columns:titleLines:)`; a missing `titleLines` means 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let lines = try container.decode(Int.self, forKey: .lines)
        let columns = try container.decode(Int.self, forKey: .columns)
        let titleLines = try container.decodeIfPresent(Int.self, forKey: .titleLines) ?? 1
        guard let profile = DisplayProfile(lines: lines, columns: columns, titleLines: titleLines) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "Display profile \(lines)x\(columns) with \(titleLines) title lines is out of range"
            ))
        }
        self = profile
    }
}
