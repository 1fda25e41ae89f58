// swift-tools-version:6.2
import PackageDescription

/// Targets are split where the dependency set changes, and grouped under `Sources/` by layer and
/// side: `Protocol` (what both sides share, no IO), `Accessory` and `Phone` (each a core with no
/// IO, then what does IO), `Transports` (sockets and D-Bus) and `Tools` (the command line,
/// vectors, fuzzing, child processes). A target declares every module it imports;
/// `scripts/check-imports.py` checks that in CI.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let nioEmbedded = Target.Dependency.product(name: "NIOEmbedded", package: "swift-nio")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let subprocess = Target.Dependency.product(name: "Subprocess", package: "swift-subprocess")
// FilePath and FileDescriptor, which swift-subprocess takes; on Apple platforms the SDK's System has them.
let systemPackage = Target.Dependency.product(name: "SystemPackage", package: "swift-system")

let package = Package(
    name: "NotifBridge",
    // X-Wing in CryptoKit needs the 26 releases; on Linux swift-crypto provides it everywhere.
    platforms: [.macOS(.v26), .iOS(.v26)],
    products: [
        .executable(name: "notifbridge", targets: ["notifbridge"]),
        .library(name: "NotifBridgeWire", targets: ["NotifBridgeWire"]),
        .library(name: "NotifBridgeANCS", targets: ["NotifBridgeANCS"]),
        .library(name: "NotifBridgeCrypto", targets: ["NotifBridgeCrypto"]),
        .library(name: "NotifBridgeRelayCore", targets: ["NotifBridgeRelayCore"]),
        .library(name: "NotifBridgeAccessoryCore", targets: ["NotifBridgeAccessoryCore"]),
        .library(name: "NotifBridgeHostCore", targets: ["NotifBridgeHostCore"]),
        // For the Apple apps (Apps/, generated with XcodeGen): the phone's extensions and the
        // Mac accessory link these, as the Linux binaries do.
        .library(name: "NotifBridgeGATT", targets: ["NotifBridgeGATT"]),
        .library(name: "NotifBridgeStore", targets: ["NotifBridgeStore"]),
        .library(name: "NotifBridgeAccessory", targets: ["NotifBridgeAccessory"]),
        .library(name: "NotifBridgeControl", targets: ["NotifBridgeControl"]),
        // For FuzzTesting/, the separate package that builds each target with libFuzzer.
        .library(name: "NotifBridgeFuzzing", targets: ["NotifBridgeFuzzing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // MARK: Protocol: shared by both sides, no IO.

        // Framing, limits, the GATT profile, the link abstraction and the protobuf schema.
        .target(
            name: "NotifBridgeWire",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Sources/Protocol/NotifBridgeWire",
            exclude: ["Proto/README.md", "Proto/notifbridge.proto", "Proto/notifbridge.options"],
            swiftSettings: swiftSettings
        ),
        // The Apple Notification Center Service, both sides (the accessory's client and the
        // simulated iPhone's server), and its mapping onto HostEvent. No IO: the Bluetooth
        // driver carries the bytes and the time (docs/ANCS.md).
        .target(
            name: "NotifBridgeANCS",
            dependencies: ["NotifBridgeWire"],
            path: "Sources/Protocol/NotifBridgeANCS",
            swiftSettings: swiftSettings
        ),
        // The control socket's protocol between the accessory daemon and local programs
        // (`notifbridge respond`, desktop notifications, the Mac app): requests, replies and the
        // bounded line codec. No IO of its own: NIO's codec protocols only.
        .target(
            name: "NotifBridgeControl",
            dependencies: [nioCore],
            path: "Sources/Protocol/NotifBridgeControl",
            swiftSettings: swiftSettings
        ),
        // HPKE recipient and sender, and AES-GCM, exactly as the platform does them.
        .target(
            name: "NotifBridgeCrypto",
            dependencies: [crypto],
            path: "Sources/Protocol/NotifBridgeCrypto",
            swiftSettings: swiftSettings
        ),

        // MARK: Accessory

        // The session state machine, the ledger rules and the alert planner. No IO.
        .target(
            name: "NotifBridgeAccessoryCore",
            dependencies: ["NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeANCS"],
            path: "Sources/Accessory/NotifBridgeAccessoryCore",
            swiftSettings: swiftSettings
        ),
        // Text for small screens and terminals: grapheme-safe cutting and wrapping. No IO.
        .target(
            name: "NotifBridgeDisplay",
            path: "Sources/Accessory/NotifBridgeDisplay",
            swiftSettings: swiftSettings
        ),
        // The SQLite store (GRDB) and the 0600 key file.
        .target(
            name: "NotifBridgeStore",
            dependencies: ["NotifBridgeAccessoryCore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeFiles", grdb],
            path: "Sources/Accessory/NotifBridgeStore",
            swiftSettings: swiftSettings
        ),
        // The daemon: link sources, a connection runner per link, the alert pipeline, the
        // control service, presenters and alert sinks.
        .target(
            name: "NotifBridgeAccessory",
            dependencies: [
                "NotifBridgeControl", "NotifBridgeAccessoryCore", "NotifBridgeANCS", "NotifBridgeStore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTCP",
                "NotifBridgeDisplay", "NotifBridgeHooks", "NotifBridgeLogGate", "NotifBridgeFiles", nioCore, nioPosix, logging, serviceLifecycle,
            ],
            path: "Sources/Accessory/NotifBridgeAccessory",
            swiftSettings: swiftSettings
        ),
        // The web dashboard (Hummingbird 2, a WebSocket for live changes, Mustache pages): IO, so
        // a target of its own that only the executable and its tests link.
        .target(
            name: "NotifBridgeDashboard",
            dependencies: [
                "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeControl", "NotifBridgeCrypto", "NotifBridgeStore", "NotifBridgeWire",
                "NotifBridgeTCP", "NotifBridgeFiles", "NotifBridgeWebServing", crypto, logging, nioCore, serviceLifecycle,
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/Accessory/NotifBridgeDashboard",
            swiftSettings: swiftSettings
        ),

        // MARK: Phone: the simulated iPhone.

        // The emulated iOS system and the three extensions' portable logic. No IO.
        .target(
            name: "NotifBridgeHostCore",
            dependencies: ["NotifBridgeWire", "NotifBridgeCrypto"],
            path: "Sources/Phone/NotifBridgeHostCore",
            swiftSettings: swiftSettings
        ),
        // Scenario files (YAML): a timeline for the simulated iPhone and what the accessory must
        // hold afterwards. Parsing and checking only; no IO.
        .target(
            name: "NotifBridgeScenario",
            dependencies: ["NotifBridgeHostCore", "NotifBridgeANCS", .product(name: "Yams", package: "Yams")],
            path: "Sources/Phone/NotifBridgeScenario",
            swiftSettings: swiftSettings
        ),
        // The phone's connection over any link, the forwarder and the scenario player.
        .target(
            name: "NotifBridgeHost",
            dependencies: [
                "NotifBridgeHostCore", "NotifBridgeScenario", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTCP",
                "NotifBridgeHooks", "NotifBridgeFiles", nioCore, logging,
            ],
            path: "Sources/Phone/NotifBridgeHost",
            swiftSettings: swiftSettings
        ),

        // MARK: Relay: the internet transport's server side.

        // APNs pushes of type accessory and their provider tokens. No IO.
        .target(
            name: "NotifBridgeRelayCore",
            dependencies: ["NotifBridgeCrypto", crypto],
            path: "Sources/Relay/NotifBridgeRelayCore",
            swiftSettings: swiftSettings
        ),
        // The relay's queues on SQLite (GRDB): accessories, token digests, numbered messages.
        .target(
            name: "NotifBridgeRelayStore",
            // NIOPosix for its thread pool (ServingRelayStore).
            dependencies: ["NotifBridgeRelayCore", "NotifBridgeFiles", grdb, nioPosix],
            path: "Sources/Relay/NotifBridgeRelayStore",
            swiftSettings: swiftSettings
        ),
        // The relay's queues on PostgreSQL (postgres-nio): several relay instances share one
        // database and wake each other with LISTEN/NOTIFY.
        .target(
            name: "NotifBridgeRelayPostgres",
            dependencies: [
                "NotifBridgeRelayCore", logging, nioCore,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/Relay/NotifBridgeRelayPostgres",
            swiftSettings: swiftSettings
        ),
        // The relay server (Hummingbird 2): posts over HTTP, each accessory's inbox over a
        // WebSocket, carried out as NotifBridgeRelayCore's rules say, on NotifBridgeRelayStore.
        .target(
            name: "NotifBridgeRelay",
            dependencies: [
                "NotifBridgeRelayCore", "NotifBridgeWire", "NotifBridgeWebServing", "NotifBridgeLogGate", logging, nioCore, serviceLifecycle,
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Sources/Relay/NotifBridgeRelay",
            swiftSettings: swiftSettings
        ),

        // MARK: Transports

        // The HTTP/1 + WebSocket server setup the relay and the dashboard share: bounded connections.
        .target(
            name: "NotifBridgeWebServing",
            dependencies: [
                logging, nioCore,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // The HTTP request parts that RequestDeadlineHandler watches.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            path: "Sources/Transports/NotifBridgeWebServing",
            swiftSettings: swiftSettings
        ),
        // The TCP link (SwiftNIO), carrying length-prefixed chunks.
        .target(
            name: "NotifBridgeTCP",
            dependencies: ["NotifBridgeWire", nioCore, nioPosix],
            path: "Sources/Transports/NotifBridgeTCP",
            swiftSettings: swiftSettings
        ),

        // The accessory's side of its relay inbox: a WebSocket (swift-websocket's connection and
        // frame handler, set up here with a handshake deadline; TLS through NIOSSL for wss://),
        // reconnecting, acking what it has stored; and the iPhone's transport extension posting
        // to the relay (async-http-client).
        .target(
            name: "NotifBridgeRelayClient",
            dependencies: [
                "NotifBridgeRelayCore", logging, nioCore, nioPosix,
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "NotifBridgeHostCore", "NotifBridgeTCP",
            ],
            path: "Sources/Transports/NotifBridgeRelayClient",
            swiftSettings: swiftSettings
        ),

        // The GATT rules both sides keep whatever the Bluetooth stack: the central's write queue
        // and chunk sizing, when it connects and how a message's transport completes, and the
        // peripheral's answer to each request. No IO; the CoreBluetooth adapters in Apps/ carry
        // them out (the BlueZ peripheral keeps the same rules in NotifBridgeBLE).
        .target(
            name: "NotifBridgeGATT",
            dependencies: ["NotifBridgeWire"],
            path: "Sources/Transports/NotifBridgeGATT",
            swiftSettings: swiftSettings
        ),

        // MARK: Tools

        // Child processes: user hooks (a command per alert, JSON on stdin), service extensions
        // and desktop notifications, each bounded in time and output. swift-subprocess spawns and
        // reaps them; this target adds the deadline, the process-group kill and the output cap.
        .target(
            name: "NotifBridgeHooks",
            dependencies: [subprocess, systemPackage],
            path: "Sources/Tools/NotifBridgeHooks",
            swiftSettings: swiftSettings
        ),
        // Log lines about what peers do, rationed per origin and summarised (the accessory
        // daemon and the relay). The throttle is pure; the gate reads the clock.
        .target(
            name: "NotifBridgeLogGate",
            path: "Sources/Tools/NotifBridgeLogGate",
            swiftSettings: swiftSettings
        ),
        // Files: replaced atomically and fsynced (the accessory's key, the iPhone's ratchet state),
        // read within a named limit, and their errors in the system's words.
        .target(
            name: "NotifBridgeFiles",
            path: "Sources/Tools/NotifBridgeFiles",
            swiftSettings: swiftSettings
        ),
        // The notification corpus, embedded from Fixtures/corpus (the files the tests read) so
        // the demo needs no working directory. Its one Swift file lists the embedded files.
        .target(
            name: "NotifBridgeFixtures",
            dependencies: ["NotifBridgeHostCore"],
            path: "Fixtures",
            exclude: ["apns", "images", "README.md"],
            sources: ["FixtureCorpus.swift"],
            resources: [.embedInCode("corpus")],
            swiftSettings: swiftSettings
        ),
        // Golden vectors: written by `notifbridge vectors`, read by the tests.
        .target(
            name: "NotifBridgeVectors",
            dependencies: ["NotifBridgeHostCore", "NotifBridgeCrypto", "NotifBridgeWire", crypto, .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Sources/Tools/NotifBridgeVectors",
            swiftSettings: swiftSettings
        ),
        // The command line: wires the accessory, the phone and a transport together.
        .executableTarget(
            name: "notifbridge",
            dependencies: [
                "NotifBridgeControl", "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeANCS", "NotifBridgeHost", "NotifBridgeHostCore", "NotifBridgeScenario",
                "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTCP", "NotifBridgeVectors", "NotifBridgeDisplay", "NotifBridgeHooks",
                "NotifBridgeFixtures", "NotifBridgeRelay", "NotifBridgeRelayCore", "NotifBridgeRelayStore", "NotifBridgeRelayPostgres", "NotifBridgeRelayClient", "NotifBridgeStore",
                "NotifBridgeDashboard", "NotifBridgeWebServing", "NotifBridgeFiles", "NotifBridgeLogGate",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging, serviceLifecycle, .product(name: "UnixSignals", package: "swift-service-lifecycle"), nioCore, nioPosix, subprocess, systemPackage,
            ],
            path: "Sources/Tools/notifbridge",
            swiftSettings: swiftSettings
        ),
        // What each fuzz harness does with one input. Here rather than in FuzzTesting/ so that
        // `swift test` replays saved crashes through the same code without a fuzzer build.
        .target(
            name: "NotifBridgeFuzzing",
            dependencies: [
                "NotifBridgeControl", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeStore",
                "NotifBridgeTCP", "NotifBridgeAccessory", "NotifBridgeScenario", "NotifBridgeDisplay", "NotifBridgeANCS",
                crypto, nioCore, nioEmbedded,
            ],
            path: "Sources/Tools/NotifBridgeFuzzing",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotifBridgeBenchmarks",
            dependencies: [
                "NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeStore", "NotifBridgeTCP", "NotifBridgeWire", "NotifBridgeCrypto",
                "NotifBridgeRelay", "NotifBridgeRelayClient", "NotifBridgeRelayCore", "NotifBridgeRelayStore", logging, nioCore, serviceLifecycle,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/NotifBridgeBenchmarks",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests

        .target(
            name: "NotifBridgeTestSupport",
            dependencies: [
                "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeRelayCore", "NotifBridgeRelayPostgres", logging, crypto, nioCore,
                // To damage a store under the process that holds it open (StoreDamage).
                grdb,
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
            ],
            path: "Tests/NotifBridgeTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeWireTests",
            dependencies: ["NotifBridgeWire", "NotifBridgeVectors", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeANCSTests",
            dependencies: ["NotifBridgeANCS", "NotifBridgeWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeRelayCoreTests",
            dependencies: ["NotifBridgeRelayCore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTestSupport", crypto],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeRelayStoreTests",
            dependencies: [
                "NotifBridgeRelayStore", "NotifBridgeRelayCore", "NotifBridgeAccessoryCore", "NotifBridgeStore", "NotifBridgeCrypto", "NotifBridgeHostCore",
                "NotifBridgeWire", "NotifBridgeTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeRelayTests",
            dependencies: [
                "NotifBridgeRelay", "NotifBridgeRelayStore", "NotifBridgeRelayPostgres", "NotifBridgeRelayCore", "NotifBridgeTestSupport", logging, nioCore,
                "NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeCrypto", "NotifBridgeWire", "NotifBridgeWebServing", "NotifBridgeLogGate", crypto,
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeRelayClientTests",
            dependencies: [
                "NotifBridgeRelayClient", "NotifBridgeRelay", "NotifBridgeRelayStore", "NotifBridgeRelayCore", "NotifBridgeHostCore", "NotifBridgeTestSupport", logging, nioCore, nioPosix, crypto,
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // A second inbox connection, which takes the inbox over from the client's.
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeCryptoTests",
            dependencies: ["NotifBridgeCrypto", "NotifBridgeWire", "NotifBridgeAccessoryCore", "NotifBridgeVectors", "NotifBridgeTestSupport", crypto],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeAccessoryCoreTests",
            dependencies: ["NotifBridgeAccessoryCore", "NotifBridgeANCS", "NotifBridgeHostCore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeLogGateTests",
            dependencies: ["NotifBridgeLogGate"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeTCPTests",
            dependencies: ["NotifBridgeTCP", "NotifBridgeWire", nioCore, nioEmbedded, nioPosix],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeHostCoreTests",
            dependencies: [
                "NotifBridgeHostCore", "NotifBridgeAccessoryCore", "NotifBridgeANCS", "NotifBridgeCrypto", "NotifBridgeWire", "NotifBridgeScenario",
                "NotifBridgeFixtures", "NotifBridgeTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeHostTests",
            dependencies: ["NotifBridgeHost", "NotifBridgeHostCore", "NotifBridgeCrypto", "NotifBridgeTCP", "NotifBridgeWire", "NotifBridgeTestSupport", nioCore],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeStoreTests",
            dependencies: [
                "NotifBridgeStore", "NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTestSupport",
                // To write stores in the layouts of earlier versions, and to read SQLite's
                // statement counters.
                grdb, .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeGATTTests",
            dependencies: ["NotifBridgeGATT", "NotifBridgeWire"],
            swiftSettings: swiftSettings
        ),
        // Checks the Info.plists and entitlements of the Apple apps under Apps/.
        .testTarget(
            name: "NotifBridgeAppsTests",
            dependencies: ["NotifBridgeWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeDisplayTests",
            dependencies: ["NotifBridgeDisplay"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeHooksTests",
            dependencies: ["NotifBridgeHooks", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeFuzzingTests",
            dependencies: ["NotifBridgeFuzzing"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeDashboardTests",
            dependencies: [
                "NotifBridgeDashboard", "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeControl", "NotifBridgeStore", "NotifBridgeHost",
                "NotifBridgeHostCore", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeTestSupport", "NotifBridgeWebServing", logging, nioCore, serviceLifecycle,
                // To damage a stored row, as a bad sector would.
                grdb,
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeEndToEndTests",
            dependencies: [
                "NotifBridgeControl", "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeANCS", "NotifBridgeStore", "NotifBridgeHost", "NotifBridgeHostCore",
                "NotifBridgeScenario", "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeDisplay", "NotifBridgeTestSupport",
                "NotifBridgeRelay", "NotifBridgeRelayClient", "NotifBridgeRelayCore", "NotifBridgeRelayStore", "NotifBridgeRelayPostgres",
                "NotifBridgeTCP", "NotifBridgeLogGate", logging, nioCore, nioEmbedded, nioPosix, serviceLifecycle,
                // To run the executable off Swift's cooperative pool.
                subprocess, systemPackage,
                // To hand the daemon the errors of a store that broke while it ran.
                grdb,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

#if os(Linux)
// Bluetooth LE through BlueZ: D-Bus over sd-bus (libsystemd), then the GATT peripheral and
// central. Linux only; the Apple builds use CoreBluetooth in their own adapters.
package.targets += [
    // The sd-bus declarations NotifBridgeDBus uses, resolved from libsystemd.so.0 at run time:
    // building needs no libsystemd-dev, and only D-Bus needs the library.
    .target(
        name: "CSystemdBus",
        path: "Sources/Transports/CSystemdBus",
        linkerSettings: [.linkedLibrary("dl")]
    ),
    // Typed D-Bus values, message coding, and a connection that owns one bus thread.
    .target(
        name: "NotifBridgeDBus",
        dependencies: ["CSystemdBus"],
        path: "Sources/Transports/NotifBridgeDBus",
        swiftSettings: swiftSettings
    ),
    // The GATT peripheral (the accessory's side) and central (the phone's), over BlueZ.
    .target(
        name: "NotifBridgeBLE",
        dependencies: ["NotifBridgeANCS", "NotifBridgeDBus", "NotifBridgeLogGate", "NotifBridgeWire", logging],
        path: "Sources/Transports/NotifBridgeBLE",
        swiftSettings: swiftSettings
    ),
    // DNS-SD for the local-network transport, through avahi-daemon over D-Bus.
    .target(
        name: "NotifBridgeDNSSD",
        dependencies: ["NotifBridgeDBus"],
        path: "Sources/Transports/NotifBridgeDNSSD",
        swiftSettings: swiftSettings
    ),
    // Desktop notifications with actions and inline replies, over org.freedesktop.Notifications.
    .target(
        name: "NotifBridgeDesktop",
        dependencies: ["NotifBridgeControl", "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeDBus", logging],
        path: "Sources/Transports/NotifBridgeDesktop",
        swiftSettings: swiftSettings
    ),
    // A private dbus-daemon per test, so bus tests never touch the machine's buses.
    .target(
        name: "NotifBridgeDBusTestSupport",
        dependencies: ["NotifBridgeDBus"],
        path: "Tests/NotifBridgeDBusTestSupport",
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "NotifBridgeDBusTests",
        dependencies: ["NotifBridgeDBus", "CSystemdBus", "NotifBridgeDBusTestSupport"],
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "NotifBridgeBLETests",
        dependencies: ["NotifBridgeBLE", "NotifBridgeANCS", "NotifBridgeDBus", "NotifBridgeLogGate", "NotifBridgeWire", "NotifBridgeDBusTestSupport", "NotifBridgeTestSupport", logging],
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "NotifBridgeDNSSDTests",
        dependencies: ["NotifBridgeDNSSD", "NotifBridgeDBus", "NotifBridgeDBusTestSupport"],
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "NotifBridgeDesktopTests",
        dependencies: [
            "NotifBridgeControl", "NotifBridgeDesktop", "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeDBus", "NotifBridgeDBusTestSupport",
            "NotifBridgeHost", "NotifBridgeHostCore", "NotifBridgeWire", "NotifBridgeStore", "NotifBridgeCrypto", "NotifBridgeTestSupport", logging,
        ],
        swiftSettings: swiftSettings
    ),
]
for target in package.targets where target.name == "notifbridge" {
    target.dependencies += ["NotifBridgeBLE", "NotifBridgeDBus", "NotifBridgeDesktop", "NotifBridgeDNSSD"]
}
#endif
