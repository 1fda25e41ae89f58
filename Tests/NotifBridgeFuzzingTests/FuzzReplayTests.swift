import Foundation
@testable import NotifBridgeFuzzing
import Testing

/// Replays saved fuzz inputs through the targets the fuzzers run (FuzzTesting/README.md), in a
/// plain `swift test` with no sanitizer build:
///
/// - `Tests/Regressions/<target>/`: every input a fuzzer crashed on. A fixed bug that comes
///   back traps here.
/// - `FuzzTesting/Corpus/<target>/`: the seeds, so a harness that no longer accepts its own
///   seeds (or traps on them) fails CI before anyone runs a fuzzer.
@Suite("Fuzz inputs replayed")
struct FuzzReplayTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let regressions = root.appendingPathComponent("Tests/Regressions")
    static let corpus = root.appendingPathComponent("FuzzTesting/Corpus")

    /// "target/file" for each file under `directory`'s target folders, sorted.
    static func inputs(in directory: URL) -> [String] {
        FuzzTarget.allCases.flatMap { target in
            let folder = directory.appendingPathComponent(target.rawValue)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(target.rawValue)/\($0)" }
        }
    }

    private static func replay(_ name: String, in directory: URL) throws {
        let target = try #require(FuzzTarget(rawValue: String(name.prefix { $0 != "/" })))
        let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
        target.run([UInt8](bytes))
    }

    @Test("a crash input no longer crashes", arguments: inputs(in: regressions))
    func regression(_ name: String) throws {
        try Self.replay(name, in: Self.regressions)
    }

    @Test("a seed runs cleanly", arguments: inputs(in: corpus))
    func seed(_ name: String) throws {
        try Self.replay(name, in: Self.corpus)
    }

    /// A folder whose name is not a target would be skipped silently; refuse it instead.
    @Test("every folder names a fuzz target")
    func foldersNameTargets() throws {
        let targets = Set(FuzzTarget.allCases.map(\.rawValue))
        for directory in [Self.regressions, Self.corpus] {
            let folders = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            #expect(Set(folders).isSubset(of: targets), "\(directory.lastPathComponent) holds \(folders.sorted())")
        }
    }

    /// Every target has seeds, so each harness starts from inputs that reach deep.
    @Test("every target has seeds")
    func everyTargetHasSeeds() {
        let seeded = Set(Self.inputs(in: Self.corpus).map { String($0.prefix { $0 != "/" }) })
        #expect(seeded == Set(FuzzTarget.allCases.map(\.rawValue)))
    }

    /// Records written by `FuzzInput.encode` read back as the same records, the contract the
    /// seed script relies on.
    @Test("records round trip")
    func recordsRoundTrip() {
        let records: [(tag: UInt8, body: [UInt8])] = [(0, []), (3, [1, 2, 3]), (0xFF, Array(repeating: 7, count: 300))]
        var input = FuzzInput(FuzzInput.encode(records))
        for record in records {
            let read = input.record()
            #expect(read?.tag == record.tag)
            #expect(read?.body == record.body)
        }
        #expect(input.record() == nil)
    }
}

/// The seeds were built to get past the key exchange and into the store; if the golden vectors
/// or the targets change under them, they would silently stop reaching that far.
@Suite("Fuzz seeds reach deep")
struct FuzzSeedDepthTests {
    private func seed(_ target: FuzzTarget, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: FuzzReplayTests.corpus.appendingPathComponent("\(target.rawValue)/\(name)")))
    }

    @Test("session seeds deliver every golden event", arguments: ["xwing", "p256"])
    func sessionSeeds(_ suite: String) throws {
        #expect(SessionTarget.run(try seed(.session, "\(suite)-sealed")) == 5)
        #expect(SessionTarget.run(try seed(.session, "\(suite)-events")) == 5)
        #expect(SessionTarget.run(try seed(.session, "\(suite)-bound-resumed")) == 5)
        #expect(SessionTarget.run(try seed(.session, "\(suite)-resync")) == 0)
    }

    @Test("ledger seeds reach the store")
    func ledgerSeeds() throws {
        #expect(LedgerTarget.run(try seed(.ledger, "golden")) == 5)
        #expect(LedgerTarget.run(try seed(.ledger, "lifecycle")) == 7)
        #expect(LedgerTarget.run(try seed(.ledger, "lifecycle-one-per-batch")) == 7)
        #expect(LedgerTarget.run(try seed(.ledger, "replayed-after-new-exchange")) == 11)
    }
}
