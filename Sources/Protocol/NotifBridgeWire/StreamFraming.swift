/// How a byte stream (the TCP link) carries chunks: each chunk is preceded by its length as a
/// little-endian UInt16 (docs/PROTOCOL.md §3.2). The chunks themselves are exactly the GATT ones,
/// so one `ChunkReassembler` serves both links.
public enum StreamFraming {
    public static let lengthPrefixLength = 2

    /// Checks a frame's declared chunk length before any of the chunk is buffered.
    public static func validate(declaredLength: Int, limits: WireLimits) throws(WireError) {
        guard declaredLength > 0 else {
            throw WireError(.malformedChunk, "stream frame declares an empty chunk")
        }
        guard declaredLength <= limits.maxChunkLength else {
            throw WireError(.tooLarge, "stream frame declares a \(declaredLength)-byte chunk; maxChunkLength is \(limits.maxChunkLength)")
        }
    }
}
