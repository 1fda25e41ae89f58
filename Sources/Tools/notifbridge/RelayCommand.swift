import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOSSL
import NotifBridgeAccessory
import NotifBridgeFiles
import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayPostgres
import NotifBridgeRelayStore
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWebServing

/// `notifbridge relay`: the internet transport's relay (docs/PROTOCOL.md §11), and the
/// registration that gives an accessory its two tokens.
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Run the relay of the internet transport, or register an accessory with it.",
        subcommands: [Serve.self, Register.self],
        defaultSubcommand: Serve.self
    )

    struct StateOption: ParsableArguments {
        @Option(help: "Directory of the relay's database (relay.sqlite, mode 0600).")
        var state: String = defaultStateDirectory() + "-relay"
        @Option(help: ArgumentHelp(
            "A PostgreSQL database instead of SQLite, shared by several relay instances: postgres://USER@HOST:PORT/DATABASE.",
            discussion: "The password is read from PGPASSWORD when the URL has none (a URL on the command line is visible to other users)."
        ))
        var postgres: String?

        func validate() throws {
            if postgres == nil { try checkStateOption(state, owned: true) }
        }

        /// Opens the store, runs `body` with it, and closes it.
        func withStore<T: Sendable>(
            logger: Logger, limits: RelayLimits = RelayLimits(), _ body: @Sendable (any RelayStorage) async throws -> T
        ) async throws -> T {
            guard let postgres else {
                let store: RelayStore
                do {
                    _ = try prepareStateDirectory(state)
                    store = try RelayStore(path: state + "/relay.sqlite", limits: limits)
                } catch {
                    throw CommandFailure("cannot open the relay's database in \(state): \(error)")
                }
                defer { try? store.close() }
                return try await body(ServingRelayStore(store))
            }
            var url = postgres
            if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], var components = URLComponents(string: postgres), components.password == nil {
                components.password = password
                url = components.string ?? postgres
            }
            let store: PostgresRelayStore
            do {
                store = try PostgresRelayStore(url: url, limits: limits, logger: logger)
            } catch {
                throw CommandFailure("--postgres: \(error)")
            }
            do {
                return try await store.serving { try await body(store) }
            } catch let error as PostgresRelayStore.ConfigurationError {
                throw CommandFailure("cannot use the PostgreSQL database: \(error)")
            }
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Take posts for registered accessories and keep them until each accessory has stored them.",
            discussion: """
                Binds to loopback unless told otherwise; on the internet, put it behind a TLS \
                terminator. Logs carry accessory IDs and numbers, never message bytes.
                """
        )

        @OptionGroup var state: StateOption
        @Option(help: "Address to listen on.")
        var host = "127.0.0.1"
        @Option(parsing: .unconditional, help: "TCP port (0 picks a free one and prints it).")
        var port = 8470
        @Option(parsing: .unconditional, help: "Connections held at once (each open accessory inbox is one); further ones wait until one closes.")
        var maxConnections: Int = 1024
        @Option(parsing: .unconditional, help: "Pushes through APNs that one accessory may send at once (\(RelaySettings.rateBurst)); a push past them is answered \"try later\".")
        var pushBurst = RateLimit.pushes.burst
        @Option(parsing: .unconditional, help: "Seconds until one more push is allowed, once the burst is spent (\(RelaySettings.rateIntervalSeconds)).")
        var pushInterval = RateLimit.pushes.interval / .seconds(1)
        @Option(parsing: .unconditional, help: "Posts that one accessory may take at once (\(RelaySettings.rateBurst)); a post past them is refused with 429 and Retry-After.")
        var postBurst = RateLimit.posts.burst
        @Option(parsing: .unconditional, help: "Seconds until one more post is allowed, once the burst is spent (\(RelaySettings.rateIntervalSeconds)).")
        var postInterval = RateLimit.posts.interval / .seconds(1)
        @Option(parsing: .unconditional, help: ArgumentHelp(
            "Messages that may wait for one accessory (\(RelaySettings.queuedMessages)); a post past them is refused with 429.",
            discussion: "Instances sharing a PostgreSQL database should be given the same queue limits and time to live: each checks its own."
        ))
        var queueMessages = RelayLimits().maxQueuedMessages
        @Option(parsing: .unconditional, help: "Bytes that may wait for one accessory (\(RelaySettings.queuedBytes)).")
        var queueBytes = RelayLimits().maxQueuedBytes
        @Option(parsing: .unconditional, help: "Seconds a message waits for its accessory before it is dropped (\(RelaySettings.timeToLiveSeconds)).")
        var messageTtl = Int(RelayLimits().timeToLive.components.seconds)

        @Option(help: "The team's APNs auth key (.p8, keep it 0600): with it the relay pushes the accessories' replies.")
        var apnsKey: String?
        @Option(help: "The auth key's 10-character key ID.")
        var apnsKeyId: String?
        @Option(help: "The 10-character team ID.")
        var apnsTeamId: String?
        @Option(help: "APNs: https://api.push.apple.com, or https://api.sandbox.push.apple.com for development builds.")
        var apnsEndpoint = APNsClient.Configuration.production
        @Option(help: "PEM certificates to trust for APNs instead of the system's (a stand-in).")
        var apnsCa: String?
        @OptionGroup var common: CommonOptions

        func validate() throws {
            let given = [apnsKey, apnsKeyId, apnsTeamId].compactMap { $0 }
            guard given.isEmpty || given.count == 3 else { throw ValidationError("--apns-key, --apns-key-id and --apns-team-id go together") }
            if apnsCa != nil, apnsKey == nil { throw ValidationError("--apns-ca is for APNs, which needs --apns-key, --apns-key-id and --apns-team-id") }
            guard !host.isEmpty else { throw ValidationError("--host must name an address to listen on, e.g. 127.0.0.1 or 0.0.0.0") }
            guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a TCP port (0...65535)") }
            guard apnsEndpoint.hasPrefix("https://") else { throw ValidationError("--apns-endpoint must start with https://") }
            guard (1...Self.maxConnectionsLimit).contains(maxConnections) else {
                throw ValidationError("--max-connections must be 1...\(Self.maxConnectionsLimit), not \(maxConnections)")
            }
            _ = try settings()
        }

        /// The push and post rates and the store's limits from the options, or which option is out of bounds.
        func settings() throws -> (pushRate: RateLimit, postRate: RateLimit, limits: RelayLimits) {
            do throws(RelaySettingError) {
                return (
                    try RelaySettings.rate(of: .pushes, burst: pushBurst, intervalSeconds: pushInterval),
                    try RelaySettings.rate(of: .posts, burst: postBurst, intervalSeconds: postInterval),
                    try RelaySettings.limits(queuedMessages: queueMessages, queuedBytes: queueBytes, timeToLiveSeconds: messageTtl)
                )
            } catch {
                let flag = switch error.setting {
                case .pushBurst: "--push-burst"
                case .pushInterval: "--push-interval"
                case .postBurst: "--post-burst"
                case .postInterval: "--post-interval"
                case .queuedMessages: "--queue-messages"
                case .queuedBytes: "--queue-bytes"
                case .timeToLive: "--message-ttl"
                }
                throw ValidationError("\(flag) must be \(error.allowed), not \(error.value)")
            }
        }

        /// Each connection costs a socket and its buffers; more accessories want more relays.
        static let maxConnectionsLimit = 65_536

        func run() async throws {
            let logger = common.makeLogger("notifbridge.relay")
            let host = host, port = port
            let (pushRate, postRate, limits) = try settings()
            let configuration = RelayServer.Configuration(
                host: host, port: port, limits: ConnectionLimits(maxConnections: maxConnections), pushRate: pushRate, postRate: postRate
            )
            let apns = try apnsClient(logger: logger)
            do {
                try await serve(configuration, limits: limits, apns: apns, logger: logger)
            } catch {
                // Shut down on every path: an HTTP client released running traps in debug builds.
                try? await apns?.shutdown()
                throw error
            }
            try await apns?.shutdown()
        }

        private func serve(_ configuration: RelayServer.Configuration, limits: RelayLimits, apns: APNsClient?, logger: Logger) async throws {
            let host = configuration.host, port = configuration.port
            try await state.withStore(logger: logger, limits: limits) { store in
                let server = RelayServer(store: store, configuration: configuration, pusher: apns, logger: logger)
                do {
                    try await server.run { port in
                        LineWriter().write("listening on \(hostAndPort(host, port))\(apns == nil ? "" : ", pushing replies through APNs")")
                    }
                } catch let error as IOError where error.errnoCode == EADDRINUSE {
                    throw CommandFailure("cannot listen on \(host):\(port): the port is already in use")
                } catch let error as IOError {
                    throw CommandFailure("cannot listen on \(host):\(port): \(socketErrorText(error))")
                }
            }
        }

        /// An APNs auth key (.p8) is one P-256 key in PEM, about 250 bytes.
        static let maxAPNsKeyFileLength = 64 * 1024

        /// The APNs client, when the key is given; its files are read now, so a bad one stops
        /// the start with a clear message.
        private func apnsClient(logger: Logger) throws -> APNsClient? {
            guard let apnsKey, let apnsKeyId, let apnsTeamId else { return nil }
            let pem: Data
            do {
                pem = try fileContents(apnsKey, limit: Self.maxAPNsKeyFileLength)
            } catch {
                throw CommandFailure("cannot read --apns-key \(apnsKey): \(error)")
            }
            let key: APNsSigningKey
            do {
                key = try APNsSigningKey(teamID: apnsTeamId, keyID: apnsKeyId, pem: String(decoding: pem, as: UTF8.self))
            } catch {
                throw CommandFailure("--apns-key \(apnsKey): \(error)")
            }
            let roots = try apnsCa.map { try RelayCredentials.certificates(file: $0, flag: "--apns-ca") }
            return APNsClient(configuration: .init(endpoint: apnsEndpoint, signingKey: key, trustRoots: roots), logger: logger)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register",
            abstract: "Register an accessory (again: new tokens) and print its inbox and post tokens, once.",
            discussion: "The relay keeps only the tokens' SHA-256 digests: a lost token cannot be shown again, only replaced."
        )

        @Argument(help: "The accessory's ID: 1 to 64 of A–Z, a–z, 0–9, '-' and '_'.")
        var accessory: String
        @OptionGroup var state: StateOption
        @OptionGroup var common: CommonOptions

        func run() async throws {
            do {
                try RelayAccessoryID.validate(accessory)
            } catch {
                throw CommandFailure("accessory ID \(accessory.debugDescription): \(error.detail)")
            }
            var generator = SystemRandomNumberGenerator()
            func token() throws -> RelayToken {
                try RelayToken(randomBytes: (0..<RelayToken.byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            }
            let inbox = try token(), post = try token()
            let accessory = accessory
            // The log level of `serve` (notice unless told): a database that cannot be reached is
            // one error line, not the driver's every retry.
            try await state.withStore(logger: common.makeLogger("notifbridge.relay")) { store in
                try await store.register(accessory: accessory, inbox: inbox, post: post)
            }
            // The only copy of the tokens: a write that fails (a full disk behind a redirect) must
            // not end in success, as `print` would.
            do {
                try FileHandle.standardOutput.write(contentsOf: Data(#"{"accessory":"\#(accessory)","inboxToken":"\#(inbox.text)","postToken":"\#(post.text)"}"#.utf8 + [0x0A]))
            } catch {
                throw CommandFailure("the new tokens could not be written to standard output (\(fileErrorText(error, path: "/dev/stdout"))); the old ones are replaced already, so register \(accessory) again")
            }
        }
    }
}
