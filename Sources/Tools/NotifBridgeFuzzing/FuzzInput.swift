/// Reads one fuzzer input as a sequence of small decisions and length-prefixed records, so a
/// flat byte string can describe chunks, messages or events, and a mutation stays local to one.
///
/// Record layout, shared with `FuzzTesting/make-seeds.py`: `tag(1) ‖ length(2, LE) ‖ body`.
/// A length beyond the remaining bytes takes what is left, so every input means something.
public struct FuzzInput: Sendable {
    private var bytes: ArraySlice<UInt8>

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    public var isEmpty: Bool { bytes.isEmpty }
    public var remaining: Int { bytes.count }

    /// The next byte, or nil at the end.
    public mutating func byte() -> UInt8? {
        bytes.popFirst()
    }

    /// The next two bytes as a little-endian length, or nil if fewer remain.
    public mutating func length() -> Int? {
        guard bytes.count >= 2 else { return nil }
        let value = Int(bytes[bytes.startIndex]) | Int(bytes[bytes.startIndex + 1]) << 8
        bytes = bytes.dropFirst(2)
        return value
    }

    /// The next `count` bytes, or fewer at the end.
    public mutating func take(_ count: Int) -> [UInt8] {
        let piece = bytes.prefix(max(0, count))
        bytes = bytes.dropFirst(piece.count)
        return Array(piece)
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        take(bytes.count)
    }

    /// The next record, or nil when no complete header remains.
    public mutating func record() -> (tag: UInt8, body: [UInt8])? {
        guard let tag = byte(), let length = length() else { return nil }
        return (tag, take(length))
    }

    /// Builds an input from records, the inverse of `record()`: for tests and seed writers.
    public static func encode(_ records: [(tag: UInt8, body: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for record in records {
            out.append(record.tag)
            out.append(UInt8(truncatingIfNeeded: record.body.count))
            out.append(UInt8(truncatingIfNeeded: record.body.count >> 8))
            out += record.body
        }
        return out
    }
}
