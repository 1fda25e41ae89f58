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
    @Flag(help: "Make a new key exchange instead of keeping the one the output file recorded, which changes every key and message.") var newExchange = false
    @Option(help: "Output file (default: Tests/Vectors/golden-v1.json, or ratchet-v1.json with --ratchet).") var out: String?

    func run() async throws {
        let path = out ?? (ratchet ? "Tests/Vectors/ratchet-v1.json" : "Tests/Vectors/golden-v1.json")
        let url = URL(fileURLWithPath: path)
        let keep = !newExchange && FileManager.default.fileExists(atPath: path)
        let data: Data
        do {
            data = ratchet
                ? try RatchetVectors.make(recorded: keep ? RatchetVectors.load(from: url) : nil)
                : try GoldenVectors.make(recorded: keep ? GoldenVectors.load(from: url) : nil)
        } catch let error as DecodingError {
            throw CommandFailure("\(path) is not a vector file whose exchange can be kept (\(JSONFileErrors.describe(error))); give --new-exchange to write a new one")
        }
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw CommandFailure("cannot write \(path): \(fileErrorText(error, path: path))")
        }
        print("wrote \(path)")
    }
}
