// swift-tools-version:6.2
import PackageDescription

/// libFuzzer harnesses for NotifBridge, in the layout swift-protobuf and swift-nio-http2 use: a
/// package beside the main one, one executable per target. Build and run them with `run.sh`
/// (`swift build --sanitize=fuzzer --sanitize=address`). What each harness does with an input is
/// `FuzzTarget` in the main package, so its `swift test` replays crashes without this package.
let harnesses = [
    "FuzzReassembler", "FuzzStreamDecoder", "FuzzSession", "FuzzLedger",
    "FuzzControl", "FuzzAPNs", "FuzzScenario", "FuzzPolicy", "FuzzANCS", "FuzzRatchet",
]

let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v26)],
    dependencies: [
        .package(name: "NotifBridge", path: ".."),
    ],
    targets: harnesses.map { name in
        .executableTarget(
            name: name,
            dependencies: [.product(name: "NotifBridgeFuzzing", package: "NotifBridge")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    }
)
