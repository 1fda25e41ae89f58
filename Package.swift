// swift-tools-version:6.2
import PackageDescription

/// Targets are split where the dependency set changes: the wire and core layers have no IO,
/// the store owns SQLite, the TCP link owns sockets, and only the executable wires them together.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "NotifBridge",
    // X-Wing in CryptoKit needs the 26 releases; on Linux swift-crypto provides it everywhere.
    platforms: [.macOS(.v26), .iOS(.v26)],
    products: [
        .executable(name: "notifbridge", targets: ["notifbridge"]),
        .library(name: "NotifBridgeWire", targets: ["NotifBridgeWire"]),
        .library(name: "NotifBridgeCrypto", targets: ["NotifBridgeCrypto"]),
        .library(name: "NotifBridgeAccessoryCore", targets: ["NotifBridgeAccessoryCore"]),
        .library(name: "NotifBridgeHostCore", targets: ["NotifBridgeHostCore"]),
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
    ],
    targets: [
        // Layer 1: framing, limits, GATT profile and the protobuf schema. No IO.
        .target(
            name: "NotifBridgeWire",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["Proto/README.md", "Proto/notifbridge.proto", "Proto/notifbridge.options"],
            swiftSettings: swiftSettings
        ),
        // Layer 2: HPKE recipient/sender and AES-GCM exactly as the platform does it.
        .target(
            name: "NotifBridgeCrypto",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Layer 3: accessory session state machine, notification ledger rules. No IO.
        .target(
            name: "NotifBridgeAccessoryCore",
            dependencies: ["NotifBridgeWire", "NotifBridgeCrypto"],
            swiftSettings: swiftSettings
        ),
        // Layer 4: the iPhone side: emulated iOS system and the extensions' portable logic. No IO.
        .target(
            name: "NotifBridgeHostCore",
            dependencies: ["NotifBridgeWire", "NotifBridgeCrypto"],
            swiftSettings: swiftSettings
        ),
        // Scenario files (YAML): a timeline for the simulated iPhone and what the accessory must
        // hold afterwards. Parsing and checking only; no IO.
        .target(
            name: "NotifBridgeScenario",
            dependencies: ["NotifBridgeHostCore", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        // Text for small screens: grapheme-safe cutting and wrapping to display profiles. No IO.
        .target(
            name: "NotifBridgeDisplay",
            swiftSettings: swiftSettings
        ),
        // User hooks (a command per alert, JSON on stdin) and desktop notifications.
        .target(
            name: "NotifBridgeHooks",
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
            dependencies: ["NotifBridgeHostCore", "NotifBridgeCrypto", "NotifBridgeWire"],
            swiftSettings: swiftSettings
        ),
        // Layer 5: SQLite (GRDB) store and the 0600 key file.
        .target(
            name: "NotifBridgeStore",
            dependencies: [
                "NotifBridgeAccessoryCore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // Layer 6: the TCP link (SwiftNIO), carrying length-prefixed chunks.
        .target(
            name: "NotifBridgeTCP",
            dependencies: [
                "NotifBridgeWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Layer 7: runtimes that drive the cores over a link, plus presenters.
        .target(
            name: "NotifBridgeAccessory",
            dependencies: [
                "NotifBridgeAccessoryCore", "NotifBridgeStore", "NotifBridgeTCP", "NotifBridgeDisplay", "NotifBridgeHooks",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifBridgeHost",
            dependencies: [
                "NotifBridgeHostCore", "NotifBridgeScenario", "NotifBridgeTCP", "NotifBridgeHooks",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notifbridge",
            dependencies: [
                "NotifBridgeAccessory", "NotifBridgeHost", "NotifBridgeScenario", "NotifBridgeTCP", "NotifBridgeVectors", "NotifBridgeDisplay", "NotifBridgeHooks",
                "NotifBridgeFixtures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotifBridgeBenchmarks",
            dependencies: ["NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeStore", "NotifBridgeTCP"],
            path: "Benchmarks/NotifBridgeBenchmarks",
            swiftSettings: swiftSettings
        ),
        // What each fuzz harness does with one input. Here rather than in FuzzTesting/ so that
        // `swift test` replays saved crashes through the same code without a fuzzer build.
        .target(
            name: "NotifBridgeFuzzing",
            dependencies: [
                "NotifBridgeWire", "NotifBridgeCrypto", "NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeStore",
                "NotifBridgeTCP", "NotifBridgeAccessory", "NotifBridgeScenario", "NotifBridgeDisplay",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifBridgeTestSupport",
            dependencies: ["NotifBridgeWire", "NotifBridgeCrypto"],
            path: "Tests/NotifBridgeTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeWireTests",
            dependencies: ["NotifBridgeWire", "NotifBridgeVectors", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeCryptoTests",
            dependencies: [
                "NotifBridgeCrypto", "NotifBridgeWire", "NotifBridgeAccessoryCore", "NotifBridgeVectors", "NotifBridgeTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeAccessoryCoreTests",
            dependencies: ["NotifBridgeAccessoryCore", "NotifBridgeHostCore", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeTCPTests",
            dependencies: [
                "NotifBridgeTCP", "NotifBridgeWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeHostCoreTests",
            dependencies: [
                "NotifBridgeHostCore", "NotifBridgeAccessoryCore", "NotifBridgeCrypto", "NotifBridgeWire", "NotifBridgeScenario",
                "NotifBridgeFixtures", "NotifBridgeTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeHostTests",
            dependencies: ["NotifBridgeHost", "NotifBridgeHostCore", "NotifBridgeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifBridgeStoreTests",
            dependencies: [
                "NotifBridgeStore", "NotifBridgeHostCore", "NotifBridgeTestSupport",
                // To write stores in the layouts of earlier versions.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
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
            name: "NotifBridgeEndToEndTests",
            dependencies: [
                "NotifBridgeAccessory", "NotifBridgeAccessoryCore", "NotifBridgeStore", "NotifBridgeHost", "NotifBridgeScenario", "NotifBridgeTestSupport",
                "NotifBridgeWire",
                .product(name: "Logging", package: "swift-log"),
                "NotifBridgeDisplay",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
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
        linkerSettings: [.linkedLibrary("dl")]
    ),
    // Typed D-Bus values, message coding, and a connection that owns one bus thread.
    .target(
        name: "NotifBridgeDBus",
        dependencies: ["CSystemdBus"],
        swiftSettings: swiftSettings
    ),
    .target(
        name: "NotifBridgeBLE",
        dependencies: ["NotifBridgeDBus", "NotifBridgeWire", .product(name: "Logging", package: "swift-log")],
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
        dependencies: ["NotifBridgeBLE", "NotifBridgeDBus", "NotifBridgeWire", "NotifBridgeDBusTestSupport", .product(name: "Logging", package: "swift-log")],
        swiftSettings: swiftSettings
    ),
]
for target in package.targets where target.name == "notifbridge" {
    target.dependencies += ["NotifBridgeBLE", "NotifBridgeDBus"]
}
#endif
