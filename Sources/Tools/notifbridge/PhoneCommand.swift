import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeRelayClient
import NotifBridgeTCP
import NotifBridgeWire
import Logging
#if canImport(NotifBridgeBLE)
import NotifBridgeBLE
#endif

/// `ancs` drives BlueZ, so it exists only where NotifBridgeBLE does.
#if canImport(NotifBridgeBLE)
private let phoneSubcommands: [any ParsableCommand.Type] = [PhoneCommand.Forward.self, PhoneCommand.Send.self, PhoneCommand.Play.self, PhoneCommand.Load.self, PhoneCommand.ANCS.self]
#else
private let phoneSubcommands: [any ParsableCommand.Type] = [PhoneCommand.Forward.self, PhoneCommand.Send.self, PhoneCommand.Play.self, PhoneCommand.Load.self]
#endif

struct PhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "Play the iPhone: key exchange as the iOS system, then forward notifications.",
        subcommands: phoneSubcommands,
        defaultSubcommand: Forward.self
    )
}

/// Where the simulated iPhone connects, and which suites it accepts.
struct PhoneTarget: ParsableArguments {
    @Option(help: "Accessory address.") var host: String = "127.0.0.1"
    @Option(parsing: .unconditional, help: "Accessory port.") var port: Int = TCPLink.defaultPort
    @Option(name: .customLong("suite"), help: "Suites the iPhone accepts, in preference order (repeatable).") var suiteOptions: [SuiteOption] = [.xwing, .p256]
    var suite: [CipherSuite] { suiteOptions.map(\.suite) }
    @Option(help: "tcp (the development link), ble (a BlueZ GATT central), lan (TCP to an accessory found with DNS-SD, X-Wing only; Linux) or internet (posted to a relay; forward only).") var transport: LinkTransport = .tcp
    @Option(help: "Seconds to browse the local network, for --transport lan.") var discoveryTimeout: Double = 5
    @Option(help: "With --transport lan, the DNS-SD instance name to connect to.") var serviceName: String?
    @Option(help: "With --transport lan, the key ID (16 hex digits) of the accessory to connect to.") var keyID: String?
    @Option(help: "Bluetooth adapter to scan and connect with, for --transport ble.") var adapter: String = "hci0"
    @Option(help: "Seconds to find and connect to the accessory over Bluetooth.") var bleTimeout: Double = 60
    @Flag(help: "Write chunks as write commands (without response) over Bluetooth.") var withoutResponse = false
    @Option(help: "The iPhone's internet keys (a 0600 JSON file): saved here after an X-Wing exchange over a link, read by --transport internet.")
    var internetPairing: String?

    func validate() throws {
        // NIO would take 70000 as port 4464 and report that one refusing.
        guard (1...65535).contains(port) else { throw ValidationError("--port \(port) is not a TCP port an accessory listens on (1...65535)") }
        guard discoveryTimeout > 0, discoveryTimeout <= 120 else {
            throw ValidationError("--discovery-timeout must be above 0 and at most 120 seconds, not \(discoveryTimeout)")
        }
        try LocalNetwork.checkServiceName(serviceName)
    }

    /// Before connecting: a --internet-pairing path that holds something other than a pairing
    /// is refused now, not after the notifications went out (and never written over).
    func checkInternetPairingPath() throws {
        guard let internetPairing, transport != .internet else { return }
        guard suite.contains(.xWing) else {
            throw CommandFailure("--internet-pairing saves the keys of an X-Wing exchange; --suite p256 alone cannot make one (give --suite xwing)")
        }
        try InternetPairingFile(path: internetPairing).checkReplaceable()
    }

    /// Saves the internet keys of the exchange `session` completed, if --internet-pairing asks.
    func saveInternetPairing(from session: HostSession) throws {
        guard let internetPairing, transport != .internet else { return }
        guard let pairing = session.pairing else { throw CommandFailure("no key exchange completed; nothing saved to --internet-pairing") }
        guard let keys = try InternetPairing(pairing, configuration: session.configuration, nextSequence: session.forwarder.nextSequence) else {
            throw CommandFailure("the exchange used P-256; the internet transport takes X-Wing only (--suite xwing)")
        }
        try InternetPairingFile(path: internetPairing).save(keys)
    }

    /// The internet transport: the pairing saved by an earlier exchange, posting to the relay.
    func internetTransport(_ target: RelayTarget) throws -> InternetTransport {
        guard let internetPairing, let relay = target.relay, let relayId = target.relayId, let relayTokenFile = target.relayTokenFile else {
            throw CommandFailure("--transport internet needs --relay, --relay-id, --relay-token-file and --internet-pairing")
        }
        try RelayCredentials.check(id: relayId)
        let client = RelayPostClient(configuration: .init(relay: relay, accessoryID: relayId, token: try RelayCredentials.token(file: relayTokenFile)))
        return try InternetTransport(file: InternetPairingFile(path: internetPairing)) { message throws(AccessoryMessageError) in
            // The relay's answer is a peer's text.
            try await client.send(message) { writeToStandardError("notifbridge: \(terminalSafe("\($0)"))\n") }
        }
    }

    /// A link exchange whose keys are saved for the internet must be X-Wing (Apple's internet
    /// transport takes nothing else), so P-256 is not offered then.
    var session: HostSession { session(suites: savesInternetPairing ? suite.filter { $0 == .xWing } : suite) }

    var savesInternetPairing: Bool { internetPairing != nil && transport != .internet }

    func session(suites: [CipherSuite]) -> HostSession {
        HostSession(configuration: .init(suites: suites, identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
    }

    /// Connects over the chosen transport, runs `body`, and disconnects.
    func connect<T: Sendable>(
        onEvent: @escaping @Sendable (HostClientEvent) -> Void,
        _ body: @Sendable (HostClient) async throws -> T
    ) async throws -> (T, HostSession) {
        switch transport {
        case .internet:
            throw CommandFailure("--transport internet carries no link (no receipts, no key exchange): use it with phone forward")
        case .tcp:
            return try await HostClient.connect(host: host, port: port, session: session, onEvent: onEvent, body)
        case .lan:
            // Apple's local-network transport takes X-Wing only.
            guard suite.contains(.xWing) else { throw CommandFailure("--transport lan needs --suite xwing: the local network takes X-Wing only") }
            let found = try await LocalNetwork.discover(seconds: discoveryTimeout, name: serviceName, keyID: keyID)
            return try await HostClient.connect(
                host: found.host, port: found.port, session: session(suites: [.xWing]), accessoryKeyID: found.keyID, onEvent: onEvent, body
            )
        case .ble:
            #if canImport(NotifBridgeBLE)
            let bluetooth = try await openBluetoothLink()
            do {
                let result = try await HostClient.run(over: bluetooth.link, session: session, onEvent: onEvent, body)
                await bluetooth.disconnect()
                return result
            } catch {
                await bluetooth.disconnect()
                throw error
            }
            #else
            throw CommandFailure("--transport ble needs BlueZ, which this build does not include (Linux only)")
            #endif
        }
    }

    #if canImport(NotifBridgeBLE)
    /// Finds the accessory over Bluetooth, connects and subscribes: one GATT connection.
    func openBluetoothLink() async throws -> GATTCentral.Connection {
        guard bleTimeout > 0, bleTimeout <= 600 else { throw CommandFailure("--ble-timeout must be above 0 and at most 600") }
        try requireDBus()
        let options = GATTCentral.Options(adapter: adapter, timeout: .seconds(bleTimeout), withoutResponse: withoutResponse)
        do {
            return try await GATTCentral.connect(options, logger: Logger(label: "notifbridge.phone"))
        } catch {
            throw CommandFailure("\(error)")
        }
    }
    #endif
}

/// Where `phone forward --transport internet` posts: only forward carries events without a link.
struct RelayTarget: ParsableArguments {
    @Option(help: "With --transport internet, the relay: http://HOST:PORT or https://HOST.") var relay: String?
    @Option(help: "With --transport internet, the accessory's ID at the relay.") var relayId: String?
    @Option(help: "With --transport internet, a file holding the accessory's post token at the relay.") var relayTokenFile: String?

    /// The relay options go with --transport internet, all three, and only with it.
    func validate(for target: PhoneTarget) throws {
        let given = [relay, relayId, relayTokenFile].compactMap { $0 }
        if target.transport == .internet {
            guard given.count == 3, target.internetPairing != nil else {
                throw ValidationError("--transport internet needs --relay, --relay-id, --relay-token-file and --internet-pairing")
            }
        } else if !given.isEmpty {
            throw ValidationError("--relay, --relay-id and --relay-token-file are for --transport internet")
        }
        // The post client takes the accessory's ws:// form of the same address too.
        if let relay { try RelayCredentials.check(url: relay, schemes: ["http", "https", "ws", "wss"]) }
    }
}

extension PhoneCommand {
struct Forward: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Forward operations from a JSON file or from flags (the default).",
        discussion: """
            Forwards the operations in --file (a JSON array of {"op": "add"|"update"|"remove"|"removeAll", …}), \
            or one operation built from the flags, then prints what the accessory sends back.
            """
    )

    enum Operation: String, ExpressibleByArgument, CaseIterable {
        case add, update, remove, removeAll = "remove-all"
    }

    @OptionGroup var target: PhoneTarget
    @OptionGroup var relayTarget: RelayTarget
    @Option(help: "JSON file with the operations to forward.") var file: String?

    @Option(help: "Operation built from flags: add (the default), update, remove or remove-all.") var op: Operation?
    // Optional, so that --file can refuse them when given; the defaults are applied when built.
    @Option(help: "Source app bundle identifier (com.apple.MobileSMS if not given).") var source: String?
    @Option(help: "Source app display name (Messages if not given).") var sourceName: String?
    @Option(help: "Notification identifier (unique within the source). An add without it gets a new one; update and remove need it.") var id: String?
    // Unconditional: a text may begin with "-" ("-5 min late"), and then it is still the text.
    @Option(parsing: .unconditional) var title: String?
    @Option(parsing: .unconditional) var subtitle: String?
    @Option(parsing: .unconditional) var body: String?
    @Option(help: "Thread identifier.") var thread: String?
    @Flag(help: "Mark the notification as not alerting (shouldAlert false).") var silent = false

    @Option(parsing: .unconditional, help: "Seconds to stay connected after the last receipt, printing replies (at most an hour).") var linger: Double = 0
    static let maxLinger = 3600.0

    /// `!(x >= 0)` also refuses NaN, which every comparison fails; infinity would trap when the
    /// wait is made a Duration. `phone send` takes the same.
    static func check(linger: Double) throws {
        guard linger >= 0, linger <= maxLinger else { throw ValidationError("--linger must be 0...\(Int(maxLinger)) seconds, not \(linger)") }
    }
    @Option(parsing: .unconditional, help: "Seconds to wait for the key exchange, and then for the receipts.") var timeout: Double = 15

    @OptionGroup var common: CommonOptions

    /// Words no option took. `forward` is `phone`'s default, so `phone --port 7000 send x.json`
    /// lands here with "send" among them; caught here, they are named instead of the missing
    /// --title being reported.
    @Argument(help: .hidden) var stray: [String] = []

    func validate() throws {
        if let word = stray.first, phoneSubcommands.contains(where: { $0.configuration.commandName == word }) {
            throw ValidationError(
                "'\(word)' is a subcommand of phone, and only comes right after it: notifbridge phone \(word) [options]"
                    + " (phone's own options, such as --port, go after the subcommand)"
            )
        }
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be above 0 and at most 600") }
        try Self.check(linger: linger)
        try relayTarget.validate(for: target)
        if source?.isEmpty == true { throw ValidationError("--source must name the app (a bundle identifier such as com.apple.MobileSMS)") }
        if file != nil {
            let given = [("--op", op != nil), ("--source", source != nil), ("--source-name", sourceName != nil), ("--id", id != nil), ("--title", title != nil), ("--subtitle", subtitle != nil), ("--body", body != nil), ("--thread", thread != nil), ("--silent", silent)]
            let flags = given.filter(\.1).map(\.0)
            guard flags.isEmpty else {
                throw ValidationError("\(flags.joined(separator: ", ")) \(flags.count == 1 ? "builds" : "build") one operation from flags, which --file replaces: give one or the other")
            }
        }
        if let id, id.isEmpty { throw ValidationError("--id must not be empty (leave it out for a new one)") }
        let op = op ?? .add
        if file == nil, op == .update || op == .remove, id == nil {
            throw ValidationError("--op \(op.rawValue) needs --id, the notification to \(op.rawValue)")
        }
    }

    /// Checked after parsing, not in `validate()`: ArgumentParser validates before it reports an
    /// unknown option, so `--titel x` would otherwise be told to give --title.
    func checkSomethingToSend() throws {
        if !stray.isEmpty {
            throw ValidationError("unexpected argument\(stray.count == 1 ? "" : "s") \(stray.map { "'\($0)'" }.joined(separator: " ")): forward takes options only")
        }
        let op = op ?? .add
        if file == nil, op == .add || op == .update, (title ?? "").isEmpty, (body ?? "").isEmpty {
            throw ValidationError("give --file, or a --title and/or --body that is not empty, for an \(op.rawValue)")
        }
    }

    func run() async throws {
        do { try checkSomethingToSend() } catch {
            // As ArgumentParser reports validate()'s errors; from run() it would show the root's usage.
            writeToStandardError("""
                Error: \(error)
                Usage: notifbridge phone forward <options>
                  See 'notifbridge phone forward --help' for more information.

                """)
            throw ExitCode.validationFailure
        }
        _ = common.makeLogger("notifbridge.phone")
        let operations = try loadOperations()
        try target.checkInternetPairingPath()
        let printer = PhonePrinter()
        if target.transport == .internet {
            try await post(operations, printer: printer)
            return
        }
        let (summary, session) = try await target.connect(onEvent: printer.print) { connection in
            try await forward(operations, over: connection, printer: printer, linger: linger, timeout: .seconds(timeout))
        }
        printer.line(summary.description)
        try target.saveInternetPairing(from: session)
        if !summary.isComplete { throw ExitCode(1) }
    }

    /// Over the internet each event is sealed, saved and posted; the receipts would come back as
    /// pushes, so the relay's acceptance is what is reported.
    private func post(_ operations: [HostOperation], printer: PhonePrinter) async throws {
        let transport = try target.internetTransport(relayTarget)
        var posted = 0
        for operation in operations {
            do {
                let sequence = try await transport.send(operation)
                posted += 1
                printer.line("posted \(operation.summaryLine) as #\(sequence) to the relay (message index \(transport.pairing.sending.nextIndex - 1))")
            } catch let error as AccessoryMessageError {
                printer.line("not posted: \(operation.summaryLine) (\(error))")
            }
        }
        printer.line("\(posted) of \(operations.count) posted to the relay")
        if posted < operations.count { throw ExitCode(1) }
    }

    private func loadOperations() throws -> [HostOperation] {
        if let file {
            return try OperationFile.read([HostOperation].self, path: file, option: "--file")
        }
        let id = id ?? UUID().uuidString
        let source = source ?? "com.apple.MobileSMS"
        var notification = HostNotification(source: source, id: id, sourceName: sourceName ?? "Messages", title: title, subtitle: subtitle, body: body, thread: thread)
        notification.deliveryDate = nil
        switch op ?? .add {
        case .add: return [.add(notification, silent ? HostAlerting(shouldAlert: false, sound: nil) : .standard)]
        case .update: return [.update(notification)]
        case .remove: return [.remove(source: source, id: id)]
        case .removeAll: return [.removeAll]
        }
    }
}
}

struct ForwardSummary: CustomStringConvertible, Sendable {
    var sent = 0
    var acknowledged = 0
    /// Acknowledged with `stored: false`: refused, stale or a duplicate.
    var notStored = 0
    var alerted = 0
    /// Refused before they were sent (too large for the accessory, an attachment not base64).
    var notSent = 0
    var description: String {
        "\(sent) forwarded, \(acknowledged) acknowledged\(notStored > 0 ? " (\(notStored) not stored)" : ""), \(alerted) alerted"
            + (notSent > 0 ? "; \(notSent) not sent" : "")
    }
    /// Anything short of every operation stored.
    var isComplete: Bool { acknowledged == sent && notStored == 0 && notSent == 0 }
}

/// Establishes, forwards each operation in order, and waits for every receipt.
func forward(_ operations: [HostOperation], over connection: HostClient, printer: PhonePrinter, linger: Double,
             pause: Duration = .zero, timeout: Duration = .seconds(15)) async throws -> ForwardSummary {
    try await connection.waitUntilEstablished(timeout: timeout)
    var sequences: Set<UInt64> = []
    var notSent = 0
    for operation in operations {
        // One the accessory could never take is reported (the client's "not sent" line) and
        // skipped; the others still go, and their receipts are waited for.
        guard let sequence = try? connection.send(operation) else {
            notSent += 1
            continue
        }
        sequences.insert(sequence)
        printer.line("sent \(operation.summaryLine) as #\(sequence)")
        if pause > .zero { try await Task.sleep(for: pause) }
    }
    let receipts = try await connection.waitForReceipts(sequences, timeout: timeout)
    if linger > 0 {
        let deadline = ContinuousClock.now + .seconds(linger)
        while ContinuousClock.now < deadline, (try? await connection.nextEvent(timeout: deadline - .now)) != nil {}
    }
    return ForwardSummary(
        sent: sequences.count, acknowledged: receipts.count, notStored: receipts.values.filter { !$0.stored }.count,
        alerted: receipts.values.filter(\.alerted).count, notSent: notSent
    )
}

/// Prints the simulated iPhone's side, as the platform would report it.
struct PhonePrinter: Sendable {
    var prefix = "phone │ "

    /// Every line is made safe as a whole, since lines quote the operations' own ids and sources
    /// (from a file or a scenario), not only the accessory's text.
    func line(_ text: String) {
        LineWriter().write(prefix + terminalSafe(text))
    }

    /// The accessory's text is a peer's: one field at a time through `terminalSafe`, so that a
    /// bidi control in one field is closed before the next.
    private func safe(_ text: String) -> String {
        terminalSafe(text)
    }

    func print(_ event: HostClientEvent) {
        switch event {
        case .established(let id, let suite, let resumed):
            line("\(resumed ? "resumed" : "completed") \(suite) key exchange \(exchangeHex(id))")
        case .receipt(let sequence, let stored, let alerted):
            line("receipt #\(sequence): \(stored ? "stored" : "not stored (refused, stale or a duplicate; an error above says if it was refused)")\(alerted ? ", alerted → addNotification returns true" : "")")
        case .response(let source, let id, let action, let text):
            line("NotificationResponse(source: \(safe(source)), notification: \(safe(id)), action: \(safe(action))\(text.map { ", text: \"\(safe($0))\"" } ?? ""))")
        case .removeOnPhone(let ids):
            line("removeNotifications(identifiers: \(ids.map { "\(safe($0.source))/\(safe($0.id))" }.joined(separator: ", ")))")
        case .resync(let reason):
            line("accessory asked to resync (\(safe(reason))); redoing the key exchange")
        case .peerError(let code, let detail):
            line("accessory error \(code): \(safe(detail))")
        case .notSent(let reason):
            line("not sent: \(safe(reason))")
        case .closed(let reason):
            line("link closed: \(safe(reason))")
        }
    }
}
