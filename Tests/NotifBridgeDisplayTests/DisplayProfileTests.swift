import Foundation
import NotifBridgeDisplay
import Testing

@Suite("Display profiles")
struct DisplayProfileTests {
    @Test("A well-formed spec parses to lines and columns", arguments: [
        ("4x32", 4, 32), ("1x1", 1, 1), ("8X40", 8, 40), ("1000x1000", 1000, 1000), ("004x018", 4, 18),
    ])
    func parsesSpec(spec: String, lines: Int, columns: Int) throws {
        let profile = try #require(DisplayProfile(spec: spec))
        #expect(profile.lines == lines)
        #expect(profile.columns == columns)
        #expect(profile.titleLines == 1)
    }

    @Test("A malformed or out-of-range spec is rejected", arguments: [
        "0x10", "4x", "x4", "4x-1", "abc", "1001x10", "10x1001", "4x0", "", "x", "4x32x2", "4xX32",
        " 4x32", "4x32 ", "+4x32", "4×32", "٤x٣٢", "99999999999999999999x1",
    ])
    func rejectsSpec(spec: String) {
        #expect(DisplayProfile(spec: spec) == nil)
    }

    @Test("Title lines must be between 1 and the number of lines", arguments: [
        (4, 1, true), (4, 4, true), (4, 0, false), (4, 5, false), (1, 1, true),
    ])
    func titleLinesRange(lines: Int, titleLines: Int, valid: Bool) {
        #expect((DisplayProfile(lines: lines, columns: 10, titleLines: titleLines) != nil) == valid)
    }

    @Test("Presets are valid profiles and print as their spec")
    func presets() {
        for preset in [DisplayProfile.watch, .eInk, .hud] {
            #expect(DisplayProfile(lines: preset.lines, columns: preset.columns, titleLines: preset.titleLines) == preset)
            #expect(DisplayProfile(spec: preset.description)?.columns == preset.columns)
        }
        #expect(DisplayProfile.watch.description == "4x18")
        #expect(DisplayProfile.eInk.description == "8x40")
        #expect(DisplayProfile.hud.description == "2x32")
    }

    @Test("A profile survives a JSON round trip")
    func codableRoundTrip() throws {
        let data = try JSONEncoder().encode(DisplayProfile.eInk)
        #expect(try JSONDecoder().decode(DisplayProfile.self, from: data) == .eInk)
    }

    @Test("Decoding defaults titleLines to 1 and validates like the initialiser", arguments: [
        (#"{"lines":4,"columns":18}"#, true),
        (#"{"lines":0,"columns":18}"#, false),
        (#"{"lines":4,"columns":18,"titleLines":5}"#, false),
        (#"{"lines":4,"columns":5000}"#, false),
    ])
    func decodingValidates(json: String, valid: Bool) {
        let decoded = try? JSONDecoder().decode(DisplayProfile.self, from: Data(json.utf8))
        #expect((decoded != nil) == valid)
        if let decoded { #expect(decoded.titleLines == 1) }
    }
}
