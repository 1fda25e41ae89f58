#if canImport(NotifBridgeBLE)
import ArgumentParser
import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeFiles
import NotifBridgeANCS
import NotifBridgeBLE
import NotifBridgeCrypto
import NotifBridgeScenario
import NotifBridgeVectors

extension PhoneCommand {
    /// The iPhone's ANCS service over BlueZ, playing a scenario (`--file`, through the ANCS
    /// server model) or sending the raw bytes of a file (`--raw-file`, a transport test tool
    /// that never builds ANCS messages itself).
    struct ANCS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ancs",
            abstract: "Serve the ANCS service as an iPhone, connect to the accessory, and play a scenario or raw values.",
            discussion: """
                With --file, plays an ANCS scenario (Scenarios/ancs/): posts, modifications and \
                removals as Notification Source events, Control Point requests answered on the Data \
                Source from the scenario's notifications, disconnects (one may cut a reply in half), \
                reconnects that announce what is held as pre-existing, and expect-action steps that \
                wait for the accessory to ask for an action. Prints each request, action and disconnect.

                With --raw-file: \
                Once the accessory has subscribed to both sources, runs --raw-file line by line: `ns HEX` and `ds HEX` \
                notify a value (split into ATT-MTU-sized notifications), `sleep MS` waits, `disconnect` disconnects and \
                ends the file; blank lines and `#` comments are skipped. Prints each Control Point write as \
                `control-point HEX` and accepts it, or with --control-point-error refuses it with that ANCS error.
                """
        )

        @Option(help: "Bluetooth adapter to serve ANCS from and connect with.") var adapter: String = "hci1"
        @Option(help: "ANCS scenario (YAML; see Scenarios/ancs/).") var file: String?
        @Option(help: "File of ns/ds/sleep/disconnect lines.") var rawFile: String?
        @Option(help: "Seconds an expect-action step of --file waits for the accessory.") var actionTimeout: Double = 60
        @Option(help: "Seconds without Control Point requests, after the last step of --file, before disconnecting.") var settle: Double = 3
        @Option(help: "Seconds to find and connect to the accessory.") var bleTimeout: Double = 60
        @Option(help: "Seconds the accessory may take to subscribe to both sources.") var subscribeTimeout: Double = 60
        @Option(parsing: .unconditional, help: "Seconds to stay connected after the file, printing Control Point writes.") var linger: Double = 0
        @Option(help: "Refuse every Control Point write with this ANCS error, in hex: A0 (unknown command) … A3 (action failed).")
        var controlPointError: String?
        @OptionGroup var common: CommonOptions

        /// A raw file is a test script, not a corpus.
        static let maxFileBytes = 1 << 20

        enum Step: Equatable {
            case notify(ANCSGATTServer.Characteristic, [UInt8])
            case sleep(milliseconds: Int)
            case disconnect
        }

        func validate() throws {
            guard (file == nil) != (rawFile == nil) else { throw ValidationError("give either --file or --raw-file") }
            for (name, value) in [("--ble-timeout", bleTimeout), ("--subscribe-timeout", subscribeTimeout), ("--action-timeout", actionTimeout), ("--settle", settle)] where !(value > 0 && value <= 600) {
                throw ValidationError("\(name) must be above 0 and at most 600")
            }
            guard linger >= 0, linger <= 600 else { throw ValidationError("--linger must be 0...600") }
            if let controlPointError, UInt8(controlPointError, radix: 16).map({ (0xA0...0xA3).contains($0) }) != true {
                throw ValidationError("--control-point-error must be A0, A1, A2 or A3")
            }
        }

        func run() async throws {
            let logger = common.makeLogger("notifbridge.phone")
            if let file {
                return try await playScenario(file, logger: logger)
            }
            let steps = try Self.parse(try readFile(rawFile ?? ""))
            let printer = PhonePrinter(prefix: "")
            let answer: ANCSGATTServer.ControlPointAnswer = controlPointError.flatMap { UInt8($0, radix: 16) }.map { .rejected(attError: $0) } ?? .accepted
            let server = try await ANCSGATTServer.start(adapter: adapter, logger: logger) { bytes in
                printer.line("control-point \(hexString(bytes))")
                return answer
            }
            let watcher = Task {
                for await (characteristic, on) in server.subscriptions {
                    printer.line("\(on ? "subscribed" : "unsubscribed") \(characteristic == .dataSource ? "data-source" : "notification-source")")
                }
            }
            defer { watcher.cancel() }
            do {
                try await server.connectAndAwaitSubscriptions(timeout: .seconds(bleTimeout + subscribeTimeout))
                printer.line("connected")
                try await play(steps, on: server, printer: printer)
                try await Task.sleep(for: .seconds(linger))
            } catch {
                await server.disconnect()
                await server.stop()
                throw error as? CommandFailure ?? CommandFailure("\(error)")
            }
            await server.disconnect()
            await server.stop()
        }

        private func play(_ steps: [Step], on server: ANCSGATTServer, printer: PhonePrinter) async throws {
            for step in steps {
                switch step {
                case .notify(let characteristic, let bytes):
                    try await server.notify(characteristic, bytes)
                    printer.line("sent \(characteristic == .dataSource ? "ds" : "ns") \(bytes.count) bytes")
                case .sleep(let milliseconds):
                    try await Task.sleep(for: .milliseconds(milliseconds))
                case .disconnect:
                    await server.disconnect()
                    printer.line("disconnected")
                    return
                }
            }
        }

        private func readFile(_ path: String) throws -> String {
            let data: Data
            do { data = try fileContents(path, limit: Self.maxFileBytes) } catch {
                throw CommandFailure("cannot read \(path): \(error)")
            }
            return String(decoding: data, as: UTF8.self)
        }

        private func playScenario(_ path: String, logger: Logger) async throws {
            let scenario: ANCSScenario
            do { scenario = try ANCSScenario.parse(try readFile(path)) } catch let error as ANCSScenario.Invalid {
                throw CommandFailure("\(path): \(error.description)")
            }
            let player = ANCSPlayer(
                scenario: scenario,
                timing: .init(connect: .seconds(bleTimeout), subscribe: .seconds(subscribeTimeout), action: .seconds(actionTimeout), settle: .seconds(settle)),
                printer: PhonePrinter(prefix: "")
            )
            do {
                try await player.play(adapter: adapter, logger: logger)
            } catch {
                throw error as? CommandFailure ?? CommandFailure("\(error)")
            }
        }

        static func parse(_ text: String) throws -> [Step] {
            try text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, raw in
                let words = raw.split(whereSeparator: \.isWhitespace)
                guard let command = words.first, !command.hasPrefix("#") else { return nil }
                let fail = { (why: String) in CommandFailure("--raw-file line \(index + 1): \(why)") }
                switch (command, words.count) {
                case ("ns", 2), ("ds", 2):
                    guard let bytes = Hex.bytes(words[1]), bytes.count <= ANCSGATTServer.maxNotifyLength else {
                        throw fail("not hex of at most \(ANCSGATTServer.maxNotifyLength) bytes")
                    }
                    return .notify(command == "ns" ? .notificationSource : .dataSource, bytes)
                case ("sleep", 2):
                    guard let milliseconds = Int(words[1]), (0...600_000).contains(milliseconds) else { throw fail("sleep takes 0...600000 ms") }
                    return .sleep(milliseconds: milliseconds)
                case ("disconnect", 1):
                    return .disconnect
                default:
                    throw fail("expected `ns HEX`, `ds HEX`, `sleep MS` or `disconnect`")
                }
            }
        }
    }
}
#endif
