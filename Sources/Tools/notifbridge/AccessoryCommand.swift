import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOSSL
import NotifBridgeAccessory
import NotifBridgeCrypto
import NotifBridgeDashboard
import NotifBridgeDisplay
import NotifBridgeFiles
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWire
import ServiceLifecycle
import UnixSignals
#if canImport(NotifBridgeBLE)
import NotifBridgeBLE
import NotifBridgeDBus
#endif

struct AccessoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accessory",
        abstract: "Run the accessory daemon: key exchange, decryption, storage and display.",
        discussion: """
            Listens on loopback by default. The private key is generated on first start and kept in \
            the state directory (mode 0600), so a restarted daemon still decrypts the same iPhone session.
            """
    )

    @Option(help: "Directory for the key and the notification store.")
    var state: String = defaultStateDirectory()

    @Option(help: "Address to listen on. Anything but loopback is a local-network link, which requires X-Wing.")
    var host: String = "127.0.0.1"

    // Unconditional: `--port -1` is the value -1 (refused by its range below), not an option
    // named -1 that leaves --port without a value.
    @Option(parsing: .unconditional, help: "TCP port (0 picks a free one and prints it).")
    var port: Int = TCPLink.defaultPort

    @Option(name: .customLong("suite"), help: "Key suite the accessory offers.")
    var suiteOption: SuiteOption = .xwing
    var suite: CipherSuite { suiteOption.suite }

    @Option(name: .customLong("transport"), help: "tcp (the development link; with a non-loopback --host, the local network) or ble (a BlueZ GATT peripheral; Linux).")
    var transportOption = AccessoryTransport(.tcp)
    var transport: LinkTransport { transportOption.transport }

    @Option(help: "Bluetooth adapter for --transport ble.")
    var adapter: String = "hci0"

    @Flag(help: "Do not announce a non-loopback TCP listener on the local network (DNS-SD through avahi-daemon).")
    var noAdvertise = false

    @Option(help: "DNS-SD instance name for the local network (default: NotifBridge on <host name>).")
    var serviceName: String?

    @Option(help: "Advertised name for --transport ble (AccessorySetupKit matches it).")
    var name: String = GATTProfile.advertisedName

    @Flag(help: "With --transport ble, do not subscribe to the ANCS service of iPhones that connect.")
    var noAncs = false

    @Option(help: ArgumentHelp(
        "With --transport ble, accept pairing for this many seconds (1...3600), showing the passkey to enter on the iPhone.",
        discussion: "ANCS on a real iPhone needs a bonded link; without this flag, pair with bluetoothctl as its agent."
    ))
    var pairable: Int?

    @Flag(help: "Print one JSON object per event instead of readable lines.")
    var json = false

    @Option(parsing: .unconditional, help: "Show notifications as a screen of LINESxCOLUMNS would, e.g. 4x32 (overrides the policy file's display).")
    var display: String?

    @Option(help: "Policy file (JSON): alerts, quiet hours, muted apps, keywords, burst, retention, hook. Default: <state>/policy.json if it exists.")
    var config: String?

    @Option(parsing: .unconditional, help: "TCP connections served at once; further ones are closed as they arrive.")
    var maxConnections: Int = AccessoryConfiguration.ResourceLimits().maxConnections

    @Option(parsing: .unconditional, help: "Milliseconds a commit waits for more notifications, so that a burst shares one fsync (0...100). A notification that comes alone is committed at once.")
    var commitWindow: Int = 3

    @Option(help: "Relay of the internet transport, ws://HOST:PORT or wss://HOST (with --relay-id and --relay-token-file).")
    var relay: String?

    @Option(help: "This accessory's ID at the relay (`notifbridge relay register ID`).")
    var relayId: String?

    @Option(help: "File holding this accessory's inbox token at the relay (keep it 0600).")
    var relayTokenFile: String?

    @Option(help: "PEM file of the certificates a wss:// relay's chain must lead to, for a relay with a private CA (default: the system's roots).")
    var relayCa: String?

    @Option(help: ArgumentHelp(
        "Serve the web dashboard on HOST:PORT, e.g. 127.0.0.1:7421 (off unless given).",
        discussion: "Every request needs the token in <state>/dashboard-token; open http://HOST:PORT/login?token=<token> once."
    ), transform: DashboardAddress.parse)
    var dashboard: DashboardAddress?

    @Flag(help: .hidden) var exitWithParent = false
    @OptionGroup var common: CommonOptions

    func validate() throws {
        try checkStateOption(state, owned: true)
        if json, display != nil { throw ValidationError("--display shapes the terminal's lines; --json prints every field whole: give one or the other") }
        guard !host.isEmpty else { throw ValidationError("--host must name an address to listen on, e.g. 127.0.0.1 or 0.0.0.0") }
        let relayOptions = [relay, relayId, relayTokenFile].compactMap { $0 }
        guard relayOptions.isEmpty || relayOptions.count == 3 else {
            throw ValidationError("--relay, --relay-id and --relay-token-file go together")
        }
        if let relay { try RelayCredentials.check(url: relay, schemes: ["ws", "wss"]) }
        if relayCa != nil, relay.map({ $0.lowercased().hasPrefix("wss://") }) != true {
            throw ValidationError("--relay-ca is for a wss:// --relay")
        }
        try LocalNetwork.checkServiceName(serviceName)
        // Checked as typed: a Duration of Int.max milliseconds overflows on the way to the check.
        let maxCommitWindow = Int(AccessoryConfiguration.maxCommitWindow / .milliseconds(1))
        guard (0...maxCommitWindow).contains(commitWindow) else {
            throw ValidationError("--commit-window must be 0...\(maxCommitWindow) milliseconds, not \(commitWindow)")
        }
        if transport == .ble {
            #if canImport(NotifBridgeBLE)
            guard (1...GATTProfile.maxAdvertisedNameLength).contains(name.utf8.count) else {
                throw ValidationError("--name must be 1...\(GATTProfile.maxAdvertisedNameLength) bytes in UTF-8; \"\(terminalSafe(name))\" is \(name.utf8.count)")
            }
            // Before the key and the store are made: without a bus, nothing is left behind.
            try requireDBus()
            #endif
        }
        if let dashboard, transport == .tcp, dashboard.port != 0, dashboard.port == port, dashboard.overlaps(host: host) {
            // Otherwise the dashboard binds first, and the link's failure ends both.
            throw ValidationError("--dashboard \(hostAndPort(dashboard.host, dashboard.port)) and the link's --host \(host) --port \(port) are one address: give the dashboard another port")
        }
        guard transport != .lan else {
            throw ValidationError("--transport lan is the iPhone's; the accessory serves the local network with --transport tcp and a non-loopback --host, and announces itself")
        }
        guard transport != .internet else {
            throw ValidationError("--transport internet is the iPhone's; the accessory takes internet messages from a relay with --relay, beside its link")
        }
        if let pairable {
            guard transport == .ble else { throw ValidationError("--pairable needs --transport ble") }
            #if canImport(NotifBridgeBLE)
            guard (1...Int(PairingAgent.maxWindow.components.seconds)).contains(pairable) else {
                throw ValidationError("--pairable must be 1...\(PairingAgent.maxWindow.components.seconds) seconds; it was \(pairable)")
            }
            #endif
        }
    }

    func run() async throws {
        let logger = common.makeLogger("notifbridge.accessory")
        guard (1...AccessoryCommand.maxConnectionsLimit).contains(maxConnections) else {
            throw CommandFailure("--max-connections must be 1...\(AccessoryCommand.maxConnectionsLimit), not \(maxConnections)")
        }
        let configuration = AccessoryConfiguration(stateDirectory: state, host: host, port: port, suite: suite,
                                                   resources: .init(maxConnections: maxConnections), commitWindow: .milliseconds(commitWindow))
        // Before the daemon, which makes the key and the store: a wrong relay file stops the start
        // with nothing made.
        let internet = try relaySource(logger: logger)
        let daemon: AccessoryDaemon
        let hub = dashboard.map { _ in DashboardHub() }
        do {
            let policy = try loadPolicy(config, stateDirectory: state)
            var profile: DisplayProfile?
            if let spec = display ?? policy.display {
                guard let parsed = DisplayProfile(spec: spec) else {
                    throw CommandFailure("display \"\(spec)\" is not LINESxCOLUMNS, e.g. 4x32 (each 1...\(DisplayProfile.maximumDimension))")
                }
                profile = parsed
            }
            // One gate for the daemon's and the hooks' rationed lines, so the configured burst
            // applies to both and one summary counts what each held back.
            let gate = configuration.resources.makeLogGate()
            let sinks = try await AlertSinks.make(policy, gate: gate, logger: logger)
            let presenter: any Presenter = json ? JSONPresenter() : TerminalPresenter(profile: profile)
            daemon = try AccessoryDaemon(
                configuration: configuration,
                policy: policy,
                presenter: hub.map { PresenterGroup([presenter, $0]) } ?? presenter,
                sinks: sinks.all,
                gate: gate,
                logger: logger
            )
            for answer in sinks.answered { answer(daemon.control.respond) }
        } catch {
            throw CommandFailure("\(error)")
        }
        let service: AccessoryService
        switch transport {
        case .tcp:
            // Only a listener others can reach is announced; loopback is for development.
            let announces = !noAdvertise && !TCPLink.isLoopback(host)
            let name = serviceName ?? LocalNetwork.defaultServiceName
            let keyID = daemon.keyID
            service = AccessoryService(daemon: daemon, source: daemon.tcpSource(onListening: { port in
                if announces { LocalNetwork.announce(name: name, port: port, keyID: keyID, logger: logger) }
            }), internet: internet)
        case .ble:
            service = try await bluetoothService(daemon, internet: internet, logger: logger)
        case .lan, .internet:
            preconditionFailure("validate() refuses --transport \(transport) for the accessory")
        }
        // SIGTERM (systemd, kill) and SIGINT (Ctrl-C) stop gracefully: what was read is committed
        // and acknowledged before the process exits.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: service)]
        if let dashboard, let hub {
            services.append(.init(service: try dashboardService(dashboard, daemon: daemon, hub: hub, logger: logger)))
        }
        if exitWithParent {
            // Last, so that it is the first told to stop.
            services.append(.init(service: ParentWatch(parent: getppid()), successTerminationBehavior: .gracefullyShutdownGroup))
        }
        var group = ServiceGroupConfiguration(services: services, logger: logger)
        // SIGHUP too: a closed terminal's hang-up (or a reload by habit) ended the process at
        // once, without the last commit and the checkpoint.
        group.gracefulShutdownSignals = [.sigterm, .sigint, .sighup]
        // The drain, then a TCP link's last flush and linger (which a cancel does not cut
        // short), then the hooks' end and a margin for the store's close. Below the unit's
        // TimeoutStopSec.
        group.maximumGracefulShutdownDuration = AccessoryDaemon.shutdownGrace + Duration(TCPLink.flushTimeout) + Duration(TCPLink.lingerTimeout)
            + HookAlertSink.stopWait + .seconds(3)
        try await ServiceGroup(configuration: group).run()
        logger.info("stopped")
    }

    /// Each connection costs buffers and a task; past this, a deployment wants a relay, not a cap.
    static let maxConnectionsLimit = 1024

    private func bluetoothService(_ daemon: AccessoryDaemon, internet: (any InternetMessageSource)?, logger: Logger) async throws -> AccessoryService {
        #if canImport(NotifBridgeBLE)
        let peripheral: GATTPeripheral
        do {
            peripheral = try await GATTPeripheral.start(adapter: adapter, name: name, gate: daemon.gate, logger: logger)
        } catch {
            throw CommandFailure("\(error)")
        }
        let ancs: ANCSGATTClient?
        if noAncs {
            ancs = nil
        } else {
            do {
                ancs = try await ANCSGATTClient.start(adapter: adapter, gate: daemon.gate, logger: logger)
            } catch {
                await peripheral.stop()
                throw CommandFailure("\(error)")
            }
        }
        var agent: PairingAgent?
        if let pairable {
            do {
                agent = try await PairingAgent.start(adapter: adapter, window: .seconds(pairable), gate: daemon.gate, logger: logger) { device, passkey in
                    logger.notice("pairing with \(device.split(separator: "/").last ?? ""): enter \(passkey) on the iPhone")
                }
            } catch {
                await ancs?.stop()
                await peripheral.stop()
                throw CommandFailure("\(error)")
            }
        }
        // Each part has a bus connection of its own; losing any of them leaves Bluetooth half
        // dead with nothing to say so, so it stops the daemon as bluetoothd's exit does.
        ancs?.onBusLoss { peripheral.end(because: "the ANCS client lost its system bus connection (\($0))") }
        agent?.onBusLoss { peripheral.end(because: "the pairing agent lost its system bus connection (\($0))") }
        let announce = PresenterEvent.advertising(adapter: adapter, name: name, suite: suite.rawValue, keyID: hexString(daemon.keyID))
        return AccessoryService(
            daemon: daemon,
            source: StreamLinkSource(peripheral.links, announcing: announce),
            ancs: ancs.map { BlueZANCSPort($0, logger: logger) },
            internet: internet,
            onStop: { [agent] in
                await agent?.stop()
                await ancs?.stop()
                await peripheral.stop()
            }
        )
        #else
        throw CommandFailure("--transport ble needs BlueZ, which this build does not include (Linux only)")
        #endif
    }

    /// The web dashboard, its token made on first use.
    private func dashboardService(_ address: DashboardAddress, daemon: AccessoryDaemon, hub: DashboardHub, logger: Logger) throws -> some Service {
        let (token, tightened): (DashboardToken, Bool)
        do {
            (token, tightened) = try DashboardToken.loadOrCreate(in: state)
        } catch {
            throw CommandFailure("\(error)")
        }
        let tokenPath = (state as NSString).appendingPathComponent(DashboardToken.fileName)
        if tightened { logger.notice("\(tokenPath) could be read by others; changed it to 0600") }
        if let held = try? daemon.store.activeExchange(keyID: daemon.keyID) {
            hub.holding(suite: held.cipherSuite, exchangeID: held.exchangeID)
        }
        if !TCPLink.isLoopback(address.host) {
            logger.warning("the dashboard listens on \(address.host), beyond this machine, over plain HTTP: its token crosses the network readable")
        }
        let server = DashboardServer(
            store: daemon.store, policy: daemon.policy, respond: daemon.control.respond, hub: hub, token: token, tokenPath: tokenPath,
            configuration: .init(host: address.host, port: address.port), logger: logger
        )
        // On the accessory's own output, beside "listening on", unless that output is JSON
        // events: then the log says it (notice, the default level).
        let printed = !json
        return server.service(onListening: { port in
            let line = "dashboard at http://\(hostAndPort(address.host, port))/ (its token is in \(tokenPath))"
            if printed { LineWriter().write(line) } else { logger.notice("\(line)") }
        })
    }

    /// The relay inbox, when --relay is given; the token is read now, so a missing or empty file
    /// stops the start with a clear message.
    private func relaySource(logger: Logger) throws -> (any InternetMessageSource)? {
        guard let relay, let relayId, let relayTokenFile else { return nil }
        let token = try RelayCredentials.token(file: relayTokenFile)
        try RelayCredentials.check(id: relayId)
        let roots = try relayCa.map { try RelayCredentials.certificates(file: $0) }
        let configuration = RelayInboxClient.Configuration(
            relay: relay, accessoryID: relayId, token: token, readToken: { try RelayCredentials.token(file: relayTokenFile, warn: false) }, trustRoots: roots)
        return RelayInboxSource(client: RelayInboxClient(configuration: configuration, logger: logger))
    }
}

/// The relay inbox client as the daemon's source of internet messages, its connection changes
/// logged.
struct RelayInboxSource: InternetMessageSource {
    let client: RelayInboxClient
    var name: String { "the relay inbox \(client.configuration.relay) as \(client.configuration.accessoryID)" }

    func push(_ body: [UInt8]) async -> InternetPushResult {
        let answer = await client.push(body)
        return answer == .answered(.delivered) ? .delivered : .notDelivered(answer.explanation)
    }

    func run(receive: @escaping @Sendable (UInt64, [UInt8]) async throws -> Void) async {
        let logger = client.logger
        let relay = terminalSafe(client.configuration.relay)
        await client.run(onEvent: { event in
            switch event {
            case .connected: logger.info("relay inbox at \(relay) connected")
            // The reason can carry the relay's own words (an HTTP reason phrase): a peer's text.
            case .disconnected(let reason, let retry): logger.notice("relay inbox at \(relay): \(terminalSafe(reason)); connecting again in \(retry)")
            }
        }, receive: receive)
    }
}

#if canImport(NotifBridgeBLE)
/// Fails plainly, saying what to install, where D-Bus (and so Bluetooth) cannot work at all,
/// before any bus error could suggest that dbus or bluetoothd is to blame.
func requireDBus() throws {
    do {
        try DBusConnection.checkAvailable()
    } catch {
        throw CommandFailure(error.description)
    }
}
#endif

/// `--dashboard HOST:PORT`; an IPv6 host in brackets, `[::1]:7421`.
struct DashboardAddress {
    var host: String
    var port: Int

    /// Whether a listener on `host` and the same port would collide with this one: the same
    /// host, `::` (every address, of both families on Linux), or `0.0.0.0` and an IPv4 address.
    func overlaps(host other: String) -> Bool {
        func coversIPv4(_ wildcard: String, _ address: String) -> Bool { wildcard == "0.0.0.0" && !address.contains(":") }
        return host == other || host == "::" || other == "::" || coversIPv4(host, other) || coversIPv4(other, host)
    }

    /// The address, or a ValidationError that ArgumentParser shows after "The value … is
    /// invalid", so that the person learns which part is wrong.
    static func parse(_ argument: String) throws -> DashboardAddress {
        let form = "HOST:PORT, e.g. 127.0.0.1:7421 (an IPv6 host in brackets, [::1]:7421)"
        let host: Substring, port: Substring
        if argument.hasPrefix("["), let close = argument.firstIndex(of: "]") {
            host = argument[argument.index(after: argument.startIndex)..<close]
            guard argument[close...].hasPrefix("]:") else { throw ValidationError("not \(form)") }
            port = argument[argument.index(close, offsetBy: 2)...]
        } else {
            guard let colon = argument.lastIndex(of: ":"), !argument[..<colon].contains(":") else { throw ValidationError("not \(form)") }
            host = argument[..<colon]
            port = argument[argument.index(after: colon)...]
        }
        guard !host.isEmpty else { throw ValidationError("no host before the port (\(form))") }
        guard let number = Int(port), (0...65535).contains(number) else { throw ValidationError("\(port) is not a TCP port (0...65535)") }
        return DashboardAddress(host: String(host), port: number)
    }
}

/// How the accessory and the simulated iPhone reach each other.
enum LinkTransport: String, ExpressibleByArgument, CaseIterable {
    case tcp, ble
    /// The phone only: TCP to an accessory found with DNS-SD.
    case lan
    /// The phone only: sealed with the internet ratchet and posted to a relay.
    case internet
}

/// The accessory's --transport. Only tcp and ble are listed; lan and internet parse, so that
/// `validate()` can say how the accessory serves those instead.
struct AccessoryTransport: ExpressibleByArgument {
    var transport: LinkTransport

    init(_ transport: LinkTransport) { self.transport = transport }

    init?(argument: String) {
        guard let transport = LinkTransport(rawValue: argument) else { return nil }
        self.transport = transport
    }

    static var allValueStrings: [String] { [LinkTransport.tcp, .ble].map(\.rawValue) }
    var defaultValueDescription: String { transport.rawValue }
}

/// What the accessory and the iPhone are given to reach a relay: an accessory ID and a token in
/// a file (the inbox token on the accessory, the post token on the iPhone).
enum RelayCredentials {
    /// The token in `file`, read now, so that a missing or empty file stops the start with a
    /// clear message.
    /// - Parameter warn: say on standard error when others can read the file (at the start; not
    ///   again at each reconnection that reads it).
    static func token(file: String, warn: Bool = true) throws -> String {
        let token: String
        do {
            token = String(decoding: try fileContents(file, limit: 4096), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw CommandFailure("cannot read --relay-token-file \(file): \(error)")
        }
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
            throw CommandFailure("--relay-token-file \(file) does not hold one token")
        }
        // A warning, not a refusal: the token is already out; this says to whom.
        if warn, let mode = (try? FileManager.default.attributesOfItem(atPath: file))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
            let warning = "notifbridge: warning: --relay-token-file \(file) can be read by other users (mode \(String(mode & 0o777, radix: 8))); "
                + "whoever reads it holds this token: chmod 600 it\n"
            try? FileHandle.standardError.write(contentsOf: Data(warning.utf8))
        }
        return token
    }

    /// A PEM file of trust roots: a few kilobytes each, and a system bundle is about 200 KiB.
    static let maxCertificateFileLength = 1 << 20

    /// The certificates in a PEM file, read now, so that a wrong file stops the start instead of
    /// failing every TLS handshake with the relay (or with APNs: `flag` names the option).
    static func certificates(file: String, flag: String = "--relay-ca") throws -> [NIOSSLCertificate] {
        let bytes: Data
        do {
            bytes = try fileContents(file, limit: maxCertificateFileLength)
        } catch {
            throw CommandFailure("cannot read \(flag) \(file): \(error)")
        }
        guard let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(bytes)), !certificates.isEmpty else {
            throw CommandFailure("\(flag) \(file) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }

    /// The relay's URL: one of `schemes`, a host, and a port that is one (NIO would take 99999
    /// as port 34463 and send the token there). The URL is echoed as given: every error is made
    /// terminal-safe where it is printed (`exitShowingSafely`).
    static func check(url: String, schemes: [String]) throws {
        let form = "\(schemes[0])://HOST:PORT or \(schemes[1])://HOST"
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), schemes.contains(scheme) else {
            throw ValidationError("--relay must be \(form), not \(url.debugDescription)")
        }
        guard let host = parts.host, !host.isEmpty else {
            throw ValidationError("--relay \(url) names no host (\(form))")
        }
        if let port = parts.port, !(1...65535).contains(port) {
            throw ValidationError("--relay \(url): \(port) is not a TCP port (1...65535)")
        }
    }

    static func check(id: String) throws {
        do {
            try RelayAccessoryID.validate(id)
        } catch {
            throw CommandFailure("--relay-id \(id.debugDescription): \(error.detail)")
        }
    }
}

/// Stops the accessory gracefully once the process that started it is gone (the demo's
/// accessory, `--exit-with-parent`): a demo killed without the chance to stop its child leaves
/// no accessory listening. Linux hands an orphan to another parent, so a changed parent ID is
/// the sign.
struct ParentWatch: Service {
    let parent: pid_t

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while getppid() == parent { try await Task.sleep(for: .milliseconds(250)) }
            }
        } catch is CancellationError {
            return
        }
    }
}
