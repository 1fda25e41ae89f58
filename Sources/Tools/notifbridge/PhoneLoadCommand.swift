import ArgumentParser
import Foundation
import NotifBridgeHost
import NotifBridgeHostCore

extension PhoneCommand {
    /// Load mode: many notifications at a steady rate, with a delivery and latency summary.
    struct Load: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load",
            abstract: "Forward many typical notifications at a rate and report delivery and latency.",
            discussion: "Each notification is a ~330-byte message with a unique id. The summary counts what was sent, acknowledged by a receipt, and not acknowledged in time, with send → receipt latency percentiles."
        )

        @OptionGroup var target: PhoneTarget
        @Option(parsing: .unconditional, help: "Notifications to send.") var count: Int = 1000
        @Option(parsing: .unconditional, help: "Notifications per second (0: as fast as the link takes them).") var rate: Double = 0
        @Option(parsing: .unconditional, help: "Notifications sent back to back each time, the groups spaced to keep --rate.") var group: Int = 1
        @Option(parsing: .unconditional, help: "Seconds to wait for the last receipts (at most an hour).") var drain: Double = 30

        func validate() throws {
            guard (1...10_000_000).contains(count) else { throw ValidationError("--count must be 1...10000000, not \(count)") }
            // Below a tenth a second the run would not end in any useful time.
            guard rate == 0 || (rate >= 0.1 && rate <= 1_000_000) else { throw ValidationError("--rate must be 0 (as fast as possible) or 0.1...1000000, not \(rate)") }
            guard (1...10_000).contains(group) else { throw ValidationError("--group must be 1...10000, not \(group)") }
            // Infinity would trap when the wait is made a Duration; an hour is already past any use.
            guard drain > 0, drain <= 3600 else { throw ValidationError("--drain must be above 0 and at most 3600 seconds, not \(drain)") }
        }

        func run() async throws {
            let printer = PhonePrinter()
            let run = LoadRun(count: count, rate: rate, group: group, drainTimeout: .seconds(drain))
            let runID = UUID().uuidString.prefix(8)
            let summary = try await target.connect(onEvent: { event in
                if case .receipt = event { return }
                printer.print(event)
            }) { connection in
                try await connection.waitUntilEstablished()
                printer.line("sending \(count) notification\(count == 1 ? "" : "s")\(rate > 0 ? " at \(rate)/s" : " as fast as possible")\(group > 1 ? ", \(group) at a time" : "")")
                return try await run.run(over: connection) { SampleNotifications.typical(index: $0, run: String(runID)) }
            }.0
            // One printed line per line: a line is made terminal-safe whole, its breaks included.
            for line in summary.description.split(separator: "\n") { printer.line(String(line)) }
            if summary.failed > 0 { throw ExitCode(1) }
        }
    }
}
