import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeControl
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeFiles
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeScenario
import NotifBridgeTCP
import Subprocess
import Synchronization
import SystemPackage
#if canImport(NotifBridgeBLE)
import NotifBridgeBLE
#endif

extension PhoneCommand {
    /// Plays a scenario file against an accessory and checks what it holds afterwards.
    struct Play: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play",
            abstract: "Play a scenario (YAML timeline) against an accessory and check its expectations.",
            discussion: """
                Plays adds, updates, removals, Focus changes, disconnects (also in the middle of a \
                message), reconnects, accessory restarts and reordered calls, then compares what the \
                accessory shows with the scenario's `expect` section. Against a running accessory, \
                give --state (its state directory) so the expectations can be read through its \
                control socket, and --restart-command if the scenario restarts it. With --spawn, play \
                starts its own accessory on a temporary state directory and can do both itself. \
                Scenarios/ in the repository holds examples; Scenarios/README.md documents the format.
                """
        )

        @OptionGroup var target: PhoneTarget
        @Argument(help: "Scenario file (YAML).") var file: String
        @Flag(help: "Start an accessory process for the scenario, on a temporary state directory.") var spawn = false
        @Option(help: "State directory of the running accessory, to check expectations through its control socket.") var state: String?
        @Option(help: "Shell command that restarts the running accessory (for restart-accessory steps), starting it in the background; waited for up to 60 s.") var restartCommand: String?
        @Option(parsing: .unconditional, help: "Seconds to wait for the key exchange and for receipts.") var timeout: Double = 15

        func validate() throws {
            if restartCommand?.trimmingCharacters(in: .whitespaces).isEmpty == true { throw ValidationError("--restart-command is empty; give the shell command that restarts the accessory") }
            if spawn, state != nil || restartCommand != nil {
                throw ValidationError("--spawn starts its own accessory; --state and --restart-command are for a running one")
            }
            if target.transport == .ble, spawn { throw ValidationError("--spawn runs its accessory on the TCP link; use --transport ble against a running one") }
            guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be above 0 and at most 600") }
        }

        func run() async throws {
            let scenario = try load()
            if scenario.restartsAccessory, !spawn, restartCommand == nil {
                throw CommandFailure("\(file) restarts the accessory: give --restart-command, or --spawn so play runs its own")
            }
            let printer = PhonePrinter()
            printer.line("playing \"\(scenario.name)\": \(scenario.steps.count) steps")
            guard spawn else {
                let environment = RunningAccessoryEnvironment(target: target, stateDirectory: state, restartCommand: restartCommand)
                return try await play(scenario, in: environment, checking: state != nil, printer: printer)
            }
            let accessory = try SpawnedAccessory.start(suite: target.suite.first ?? .xWing)
            // Ctrl-C, SIGTERM or a closed terminal: the accessory stops and its store (notification
            // text) is removed, as the demo does; after a SIGKILL it stops by itself. Trapped
            // from its start, whichever process runs when the signal comes.
            let interrupted = AccessoryProcess.stopOnSignals(stateDirectory: accessory.stateDirectory, printer: printer) { accessory.process }
            defer { interrupted.cancel() }
            do {
                try await accessory.waitUntilListening()
                try await play(scenario, in: accessory, checking: true, printer: printer)
            } catch {
                await accessory.stop()
                throw error
            }
            await accessory.stop()
        }

        private func play(_ scenario: Scenario, in environment: some ScenarioEnvironment, checking: Bool, printer: PhonePrinter) async throws {
            var player = ScenarioPlayer(scenario: scenario, environment: environment, say: printer.line, onEvent: printer.print)
            player.timeout = .seconds(timeout)
            let report = try await player.play(session: target.session)
            // Without a store to read, the expectations are not checked, not failed.
            guard checking else {
                printer.line("\(report.sent) calls forwarded over \(report.links) link(s), \(report.acknowledged) acknowledged, \(report.alerted) alerted; "
                    + "expectations not checked: give --state with the accessory's state directory")
                if report.acknowledged < report.sent { throw ExitCode(1) }
                return
            }
            printer.line(report.description)
            for failure in report.failures { printer.line("✗ \(failure)") }
            if !report.passed { throw ExitCode(1) }
        }

        private func load() throws -> Scenario {
            let yaml: String
            do { yaml = String(decoding: try fileContents(file, limit: ScenarioFile.maxFileLength), as: UTF8.self) } catch {
                throw CommandFailure("cannot read \(file): \(error)")
            }
            do { return try ScenarioFile.parse(yaml) } catch {
                throw CommandFailure("\(file): \(error)")
            }
        }
    }
}

extension ObservedNotification {
    init(_ listed: ListedNotification) {
        self.init(ref: NotificationRef(source: listed.source, id: listed.id), title: listed.title, body: listed.body, alerted: listed.alerted)
    }
}

/// An accessory someone else runs: reached over TCP or Bluetooth, observed through its
/// control socket.
struct RunningAccessoryEnvironment: ScenarioEnvironment {
    var target: PhoneTarget
    var stateDirectory: String?
    var restartCommand: String?
    var host: String { target.host }
    var port: Int { target.port }

    func endpoint() async throws -> AccessoryEndpoint {
        switch target.transport {
        case .tcp: .tcp(host: host, port: port)
        case .lan:
            try await {
                let found = try await LocalNetwork.discover(seconds: target.discoveryTimeout, name: target.serviceName, keyID: target.keyID)
                return AccessoryEndpoint.tcp(host: found.host, port: found.port, accessoryKeyID: found.keyID)
            }()
        case .internet:
            throw CommandFailure("a scenario needs a link that carries receipts: --transport tcp, lan or ble")
        case .ble:
            #if canImport(NotifBridgeBLE)
            .link(try await target.openBluetoothLink().link)
            #else
            throw CommandFailure("--transport ble needs BlueZ, which this build does not include (Linux only)")
            #endif
        }
    }

    /// How long a --restart-command may take before play gives up on it.
    static let restartTimeout = Duration.seconds(60)

    /// Runs `sh -c` on the command and waits for that shell alone. The accessory it starts in the
    /// background keeps running, and holds nothing of play's: swift-subprocess gives the child
    /// only descriptors 0–2 (Foundation's `Process` also gave it the socket by which it notices
    /// the child's exit, so a backgrounded accessory kept play waiting for ever). The command's
    /// output goes to standard error, beside play's report rather than into it.
    func restartAccessory() async throws {
        guard let restartCommand else { throw CommandFailure("no --restart-command to restart the accessory with") }
        let status = try await withThrowingTaskGroup(of: TerminationStatus?.self) { group in
            group.addTask {
                try await Subprocess.run(
                    .path("/bin/sh"), arguments: ["-c", restartCommand],
                    input: .none, output: .fileDescriptor(.standardError, closeAfterSpawningProcess: false),
                    error: .fileDescriptor(.standardError, closeAfterSpawningProcess: false)
                ).terminationStatus
            }
            group.addTask {
                try await Task.sleep(for: Self.restartTimeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        switch status {
        case nil: throw CommandFailure("--restart-command did not finish within \(Self.restartTimeout); start the accessory in the background (`… &`)")
        case .exited(0): break
        case .exited(let code): throw CommandFailure("--restart-command exited with status \(code)")
        case .signaled(let signal): throw CommandFailure("--restart-command was ended by signal \(signal)")
        }
        if target.transport == .tcp { try await waitUntilListening(host: host, port: port) }
    }

    func observe() async throws -> [ObservedNotification] {
        guard let stateDirectory else { return [] }
        return try await listAll(stateDirectory: stateDirectory)
    }
}

/// An accessory process that play starts, restarts and observes itself.
final class SpawnedAccessory: ScenarioEnvironment {
    let stateDirectory: String
    private let arguments: [String]
    private let current: Mutex<(process: AccessoryProcess, port: Int?)>

    /// The accessory process running now (a restart starts another).
    var process: AccessoryProcess { current.withLock { $0.process } }

    private init(stateDirectory: String, arguments: [String], process: AccessoryProcess) {
        self.stateDirectory = stateDirectory
        self.arguments = arguments
        current = Mutex((process, nil))
    }

    /// Starts the accessory; ``waitUntilListening()`` waits for its port. Whoever stops it
    /// (``stop()``) removes its directory, from the moment it starts.
    static func start(suite: CipherSuite) throws -> SpawnedAccessory {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notifbridge-play-\(UUID().uuidString)").path
        let arguments = ["accessory", "--state", directory, "--port", "0", "--suite", suite.rawValue.lowercased(), "--exit-with-parent"]
        return SpawnedAccessory(stateDirectory: directory, arguments: arguments, process: try AccessoryProcess.start(arguments: arguments))
    }

    func waitUntilListening() async throws {
        let process = self.process
        let port = try await process.waitForPort()
        current.withLock { if $0.process === process { $0.port = port } }
    }

    func endpoint() async throws -> AccessoryEndpoint {
        guard let port = current.withLock({ $0.port }) else { throw CommandFailure("the spawned accessory is not listening") }
        return .tcp(host: "127.0.0.1", port: port)
    }

    /// The new process is the current one from its start, so that a stop meanwhile stops it.
    func restartAccessory() async throws {
        let old = process
        old.stop()
        try await old.waitForExit()
        let process = try AccessoryProcess.start(arguments: arguments)
        current.withLock { $0 = (process, nil) }
        try await waitUntilListening()
    }

    func observe() async throws -> [ObservedNotification] {
        try await listAll(stateDirectory: stateDirectory)
    }

    /// Stops the accessory and removes its state directory once it has exited, not before:
    /// its last commit would otherwise write the store back after the removal.
    func stop() async {
        await process.stop(removing: stateDirectory)
    }
}

/// Everything the accessory lists: a scenario's expectations are checked against all of it.
private func listAll(stateDirectory: String) async throws -> [ObservedNotification] {
    var observed: [ObservedNotification] = []
    let reply = try await ControlClient.send(ControlRequest(op: .list), socketPath: AccessoryConfiguration.controlSocketPath(stateDirectory: stateDirectory)) {
        observed.append(ObservedNotification($0))
    }
    guard reply.ok else { throw CommandFailure("the accessory would not list its notifications: \(terminalSafe(reply.message ?? "no reason given"))") }
    return observed
}

/// Polls until the accessory accepts connections again after a restart.
private func waitUntilListening(host: String, port: Int, timeout: Duration = .seconds(30)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await TCPLink.isAccepting(host: host, port: port) { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw CommandFailure("the accessory did not listen on \(host):\(port) within \(timeout) of its restart")
}

