import ArgumentParser
import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeFixtures
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import Synchronization
import UnixSignals

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start an accessory process and a simulated iPhone against it over loopback, and forward the fixture corpus."
    )

    @Option(name: .customLong("suite"), help: "Key suite.") var suiteOption: SuiteOption = .xwing
    var suite: CipherSuite { suiteOption.suite }
    @Option(parsing: .unconditional, help: "Seconds between notifications, so the flow can be followed (at most 60).") var pause: Double = 0.3
    @OptionGroup var common: CommonOptions

    func validate() throws {
        // Also refuses NaN and infinity, which no comparison lets through.
        guard pause >= 0, pause <= 60 else { throw ValidationError("--pause must be 0...60 seconds, not \(pause)") }
    }

    func run() async throws {
        _ = common.makeLogger("notifbridge.demo")
        let stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("notifbridge-demo-\(UUID().uuidString)").path
        let printer = PhonePrinter()
        printer.line("starting an accessory process (\(suite.rawValue)) with a temporary store in \(stateDirectory)")
        let accessory = try AccessoryProcess.start(arguments: [
            "accessory", "--state", stateDirectory, "--port", "0", "--suite", suite.rawValue.lowercased(), "--log-level", common.logLevel.rawValue,
            "--exit-with-parent",
        ])
        // Ctrl-C, SIGTERM (timeout, kill) or a closed terminal: stop the accessory and remove its
        // store and key before exiting. A SIGKILL leaves the directory; the accessory then stops
        // by itself (--exit-with-parent).
        let interrupted = AccessoryProcess.stopOnSignals(stateDirectory: stateDirectory, printer: printer) { accessory }
        defer { interrupted.cancel() }
        do {
            try await demonstrate(with: accessory, stateDirectory: stateDirectory, printer: printer)
        } catch {
            await accessory.stop(removing: stateDirectory)
            throw error
        }
        await accessory.stop(removing: stateDirectory)
    }

    private func demonstrate(with accessory: AccessoryProcess, stateDirectory: String, printer: PhonePrinter) async throws {
        let port = try await accessory.waitForPort()
        printer.line("accessory process \(accessory.pid) listens on 127.0.0.1:\(port); connecting as the iPhone")

        let session = HostSession(configuration: .init(suites: [suite], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
        let operations = try FixtureCorpus.operations()
        let pause = Duration.milliseconds(Int(self.pause * 1000))
        let summary = try await HostClient.connect(host: "127.0.0.1", port: port, session: session, onEvent: printer.print) { connection in
            try await forward(operations, over: connection, printer: printer, linger: 0, pause: pause)
        }.0
        try await Task.sleep(for: .milliseconds(200))
        accessory.stop()
        try await accessory.waitForExit()
        printer.line("\(summary), all decrypted by accessory process \(accessory.pid) over TCP with \(suite.rawValue)")
        let heldBack = try Self.heldBackByBursts(stateDirectory: stateDirectory)
        if heldBack > 0 {
            // The burst's summary alert comes once its window has room, after the demo has ended.
            let limit = BurstLimiter.Limit()
            printer.line(
                "\(heldBack) of them were listed without alerting, as part of a burst (at most \(limit.maxAlerts) alerts in \(Int(limit.windowSeconds)) s); "
                    + "an accessory left running announces them in one summary alert once the window has room"
            )
        }
        if summary.acknowledged < summary.sent || summary.notSent > 0 { throw ExitCode(1) }
    }

    /// How many notifications the burst limiter held back, from the plans the stopped accessory
    /// stored with them (a planner's decision, not the presenter's wording).
    static func heldBackByBursts(stateDirectory: String) throws -> Int {
        let store = try AccessoryStore(path: AccessoryConfiguration.storePath(stateDirectory: stateDirectory))
        defer { try? store.close() }
        return try store.notifications(includeRemoved: true).count { $0.alertDecision?.coalesced == true }
    }
}

/// The accessory as a child process of this executable; its output is shown prefixed.
final class AccessoryProcess: Sendable {
    private let process: Process
    private let port = Mutex<Int?>(nil)
    private let exited = Mutex(false)
    let pid: Int32

    private init(process: Process) {
        self.process = process
        pid = process.processIdentifier
    }

    static func start(arguments: [String]) throws -> AccessoryProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let child = AccessoryProcess(process: process)
        child.relay(output.fileHandleForReading)
        return child
    }

    /// Shows the accessory's lines as they come and picks the port from "listening on". A
    /// thread of its own blocks on the pipe: Foundation's readabilityHandler on Linux can crash
    /// in libdispatch when the pipe closes as the child exits.
    private func relay(_ handle: FileHandle) {
        let thread = Thread { [weak self] in
            var buffer = Data()
            while case let data = handle.availableData, !data.isEmpty {
                buffer.append(data)
                // The lines of one read go out in one write, so that the simulated iPhone's lines
                // do not land inside a notification the accessory wrote as one.
                var shown = ""
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    if let self, line.hasPrefix("listening on "), let port = Int(line.split(separator: " ")[2].split(separator: ":").last ?? "") {
                        self.port.withLock { $0 = port }
                    }
                    // The accessory already made peer text safe; this keeps the relay safe even so.
                    shown += "  accessory │ " + terminalSafe(line) + "\n"
                }
                if !shown.isEmpty { LineWriter().write(text: shown) }
            }
        }
        thread.start()
    }

    func waitForPort(timeout: Duration = .seconds(30)) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let port = port.withLock({ $0 }) { return port }
            guard process.isRunning else { throw HostFailure(description: "the accessory process exited with status \(process.terminationStatus) before listening") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HostFailure(description: "the accessory process did not start listening within \(timeout)")
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }

    func waitForExit() async throws {
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Past the accessory's own graceful stop (15 s), a stopped accessory that still runs is
    /// killed: the removal of its directory must not wait for ever.
    static let killAfter = Duration.seconds(20)

    /// Stops the accessory, waits for it to exit, then removes its temporary `stateDirectory`.
    func stop(removing stateDirectory: String) async {
        stop()
        // In a task of its own, which no cancellation reaches: the removal must wait for the
        // last commit whatever happens around it.
        let process = self.process
        await Task.detached {
            let deadline = ContinuousClock.now + Self.killAfter
            while process.isRunning {
                if ContinuousClock.now > deadline { kill(process.processIdentifier, SIGKILL) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }.value
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    /// Until cancelled: on SIGINT, SIGTERM or SIGHUP, stops the accessory `current` names,
    /// removes its temporary state directory (its store holds notification text), says so and
    /// exits with 128 + the signal. A second signal meanwhile exits at once.
    static func stopOnSignals(stateDirectory: String, printer: PhonePrinter, current: @escaping @Sendable () -> AccessoryProcess) -> Task<Void, Never> {
        Task {
            var stopping = false
            for await signal in await UnixSignalsSequence(trapping: .sigint, .sigterm, .sighup) {
                guard !stopping else {
                    printer.line("stopped by a second \(signal): the accessory may still be stopping; its store may be left in \(stateDirectory)")
                    Foundation.exit(128 + signal.rawValue)
                }
                stopping = true
                Task {
                    await current().stop(removing: stateDirectory)
                    printer.line("stopped by \(signal): the accessory process has exited and its temporary store is removed")
                    Foundation.exit(128 + signal.rawValue)
                }
            }
        }
    }
}

/// This executable's own path, so the demo starts the same build as its accessory.
func executablePath() -> String {
    #if os(Linux)
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
    #endif
    return CommandLine.arguments[0]
}
