/// The fuzz targets: what each harness in `FuzzTesting/` does with one input.
///
/// They live in the main package, not in the fuzz package, so that `swift test` replays every
/// saved crash (`Tests/Regressions/<target>/`) through exactly the code the fuzzer ran, without a
/// sanitizer build. A target returns normally for any input that the code under test refuses
/// with an error; it traps (`precondition`) when an invariant breaks, which the fuzzer reports.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `ChunkReassembler` fed chunks split from the input, with time passing.
    case reassembler
    /// The TCP link's stream decoder in an `EmbeddedChannel`, fed the input in pieces.
    case streamDecoder = "stream-decoder"
    /// `LinkMessage`s decoded from the input, driving an `AccessoryConnection`.
    case session
    /// Decrypted `HostEvent`s: validation, then the store's ledger against a model of it.
    case ledger
    /// Control-socket lines and requests.
    case control
    /// APNs payloads mapped as iOS would, and service-extension output applied to one.
    case apns
    /// Scenario YAML.
    case scenario
    /// Policy files, and the daemon's use of what they set.
    case policy
    /// The ANCS client fed Notification Source and Data Source bytes, time and actions.
    case ancs
    /// The internet ratchet's receiver fed real, late, replayed, tampered and arbitrary messages.
    case ratchet

    /// Runs the target on one input.
    public func run(_ input: UnsafeRawBufferPointer) {
        run(Array(input))
    }

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .reassembler: WireTargets.reassembler(bytes)
        case .streamDecoder: WireTargets.streamDecoder(bytes)
        case .session: SessionTarget.run(bytes)
        case .ledger: LedgerTarget.run(bytes)
        case .control: ControlTarget.run(bytes)
        case .apns: APNsTarget.run(bytes)
        case .scenario: ScenarioTarget.run(bytes)
        case .policy: PolicyTarget.run(bytes)
        case .ancs: ANCSTarget.run(bytes)
        case .ratchet: RatchetTarget.run(bytes)
        }
    }
}
