import ArgumentParser
import Foundation
import NotifBridgeVectors

/// Writes the golden vectors under Tests/Vectors (see GoldenVectors.swift).
struct VectorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors",
        abstract: "Write golden protocol vectors (fixed accessory key, recorded exchange and ciphertexts).",
        shouldDisplay: false
    )

    @Flag(help: "Write the internet transport's ratchet vectors instead (Tests/Vectors/ratchet-v1.json).") var ratchet = false
    @Option(help: "Output file (default: Tests/Vectors/golden-v1.json, or ratchet-v1.json with --ratchet).") var out: String?

    func run() async throws {
        let path = out ?? (ratchet ? "Tests/Vectors/ratchet-v1.json" : "Tests/Vectors/golden-v1.json")
        let data = try ratchet ? RatchetVectors.make() : GoldenVectors.make()
        try data.write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    }
}
