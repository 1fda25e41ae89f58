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

    @Option(help: "Output file.") var out: String = "Tests/Vectors/golden-v1.json"

    func run() async throws {
        let data = try GoldenVectors.make()
        try data.write(to: URL(fileURLWithPath: out))
        print("wrote \(out)")
    }
}
