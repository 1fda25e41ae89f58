import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeFiles
import NotifBridgeVectors

/// Writes the golden vectors under Tests/Vectors (see GoldenVectors.swift).
struct VectorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors",
        abstract: "Write golden protocol vectors (fixed accessory key, recorded exchange and ciphertexts).",
        shouldDisplay: false
    )

    @Flag(help: "Write the internet transport's ratchet vectors instead (Tests/Vectors/ratchet-v1.json).") var ratchet = false
    @Flag(help: "With --ratchet: make a new key exchange instead of keeping the one the output file recorded, which changes every key and message.") var newExchange = false
    @Option(help: "Output file (default: Tests/Vectors/golden-v1.json, or ratchet-v1.json with --ratchet).") var out: String?

    func validate() throws {
        if newExchange && !ratchet { throw ValidationError("--new-exchange goes with --ratchet") }
    }

    func run() async throws {
        let path = out ?? (ratchet ? "Tests/Vectors/ratchet-v1.json" : "Tests/Vectors/golden-v1.json")
        let data: Data
        if ratchet {
            let url = URL(fileURLWithPath: path)
            let recorded = newExchange || !FileManager.default.fileExists(atPath: path) ? nil : try RatchetVectors.load(from: url)
            data = try RatchetVectors.make(recorded: recorded)
        } else {
            data = try GoldenVectors.make()
        }
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw CommandFailure("cannot write \(path): \(fileErrorText(error, path: path))")
        }
        print("wrote \(path)")
    }
}
