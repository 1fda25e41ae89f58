import NotifBridgeCrypto
import NotifBridgeVectors
import Testing

/// The hex reader of the vector files and the ANCS scripts: exact digits, nothing else.
@Suite struct HexTests {
    @Test("Pairs of digits in either case read as bytes, and hexString writes them back", arguments: [
        ("", [UInt8]()), ("00", [0]), ("ff", [0xff]), ("FF", [0xff]), ("0a1B2c", [0x0a, 0x1b, 0x2c]),
    ])
    func reads(text: String, bytes: [UInt8]) {
        #expect(Hex.bytes(text) == bytes)
        #expect(Hex.bytes(hexString(bytes)) == bytes)
    }

    @Test("Anything else is refused: an odd count, a sign, spaces, other letters, 0x", arguments: ["0", "fff", "+f", "-1", " f", "f ", "gg", "0x0f", "é1"])
    func refuses(text: String) {
        #expect(Hex.bytes(text) == nil)
    }
}
