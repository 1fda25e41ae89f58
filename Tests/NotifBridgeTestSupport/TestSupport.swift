import Foundation
import NotifBridgeWire

/// Where the repository's test vectors live, found from this file's path so tests need no
/// bundle resources.
public enum TestVectors {
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    public static func load<T: Decodable>(_ type: T.Type, from name: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

/// The fixture corpus at the repository root (Fixtures/), shared by the tests and the examples.
public enum TestFixtures {
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    public static func data(_ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }

    /// The scenario files shipped in `Scenarios/`, by file name.
    public static let scenarios = directory.deletingLastPathComponent().appendingPathComponent("Scenarios")

    public static var scenarioNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: scenarios.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
    }

    /// The JSON files in Fixtures/corpus, sorted by name.
    public static func corpusNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("corpus").path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
    }
}

/// A deterministic generator (SplitMix64) for shuffles and random inputs, so every failure
/// reproduces from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "test") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notifbridge-\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension Data {
    /// Parses lowercase or uppercase hex; traps on malformed input (test data only).
    public init(hex: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }

    public var hex: String { map { String(format: "%02x", $0) }.joined() }
}

extension ChunkLink {
    /// Two ends of an in-memory link of `kind`: what one end writes, the other reads, chunk by
    /// chunk. Closing either end finishes both inbound streams.
    public static func pair(kind: LinkKind, chunkLength: Int = 4096) -> (accessory: ChunkLink, phone: ChunkLink) {
        let (toAccessory, accessoryInput) = AsyncThrowingStream.makeStream(of: LinkInbound.self, throwing: (any Error).self)
        let (toPhone, phoneInput) = AsyncThrowingStream.makeStream(of: LinkInbound.self, throwing: (any Error).self)
        let close: @Sendable () -> Void = {
            accessoryInput.finish()
            phoneInput.finish()
        }
        func writer(_ input: AsyncThrowingStream<LinkInbound, any Error>.Continuation) -> @Sendable ([[UInt8]]) async throws -> Void {
            { chunks in
                for chunk in chunks {
                    guard case .enqueued = input.yield(.chunk(chunk)) else { throw LinkClosed() }
                }
            }
        }
        return (
            ChunkLink(peer: "memory phone", kind: kind, chunkLength: chunkLength, inbound: toAccessory, write: writer(phoneInput), close: close),
            ChunkLink(peer: "memory accessory", kind: kind, chunkLength: chunkLength, inbound: toPhone, write: writer(accessoryInput), close: close)
        )
    }

    public struct LinkClosed: Error {}
}
