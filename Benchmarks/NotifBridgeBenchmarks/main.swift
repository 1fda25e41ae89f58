import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWire
#if canImport(Glibc)
import Glibc
#endif

// Figures for a typical ~300-byte notification (run with `swift run -c release NotifBridgeBenchmarks`;
// the relay report is Relay.swift):
//   1. bytes on the wire per notification, framing included, per link;
//   2. accessory time from the last chunk to the stored record (reassembly, decrypt, decode,
//      validate, SQLite commit), one event per transaction: wall time, which includes the
//      commit's fsync (synchronous = FULL), beside the thread's CPU time, which does not.
// These are reported, never asserted: timing belongs in a benchmark, not in a test.

/// NB_BENCH_COUNT notifications per suite; the store goes under TMPDIR (mind that a tmpfs has no fsync cost).
let count = Int(ProcessInfo.processInfo.environment["NB_BENCH_COUNT"] ?? "") ?? 2000

func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}

func percentile(_ sorted: [Duration], _ p: Double) -> Duration {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Mean and percentiles of samples, e.g. "mean 12.0 µs, p50 …".
func summary(_ samples: [Duration]) -> String {
    let sorted = samples.sorted()
    let mean = sorted.reduce(Duration.zero, +) / sorted.count
    return "mean \(microseconds(mean)), p50 \(microseconds(percentile(sorted, 0.5))), p90 \(microseconds(percentile(sorted, 0.9))), p99 \(microseconds(percentile(sorted, 0.99)))"
}

func microseconds(_ d: Duration) -> String {
    String(format: "%.1f µs", Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6)
}

/// Runs the key exchange between the two cores in memory and returns both, established.
func establish(_ suite: CipherSuite, identity: AccessoryPrivateKey) throws -> (AccessoryConnection, HostSession, KeyExchangeParameters) {
    var accessory = AccessoryConnection(
        session: AccessorySession(identity: identity, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth])),
        chunkLength: TCPLink.defaultChunkLength, now: .now
    )
    var host = HostSession(configuration: .init(suites: [suite], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
    var framer = ChunkFramer(chunkLength: TCPLink.defaultChunkLength)
    var reassembler = ChunkReassembler()
    var parameters: KeyExchangeParameters?
    var pending = host.connected(maxChunkLength: TCPLink.defaultChunkLength)
    while !pending.isEmpty {
        var next: [HostSession.Action] = []
        for case .send(let message) in pending {
            for chunk in framer.frame(WireCodec.encode(message)) {
                for action in accessory.received(chunk: chunk, now: .now) {
                    switch action {
                    case .persistExchange(let p, _): parameters = p
                    case .send(let transmission):
                        for chunk in transmission.chunks {
                            if let bytes = try reassembler.receive(chunk, now: .now) {
                                next += host.received(try WireCodec.decode(LinkMessage.self, from: bytes))
                            }
                        }
                    default: break
                    }
                }
            }
        }
        pending = next
    }
    guard host.isEstablished, let parameters else { fatalError("key exchange did not complete") }
    return (accessory, host, parameters)
}

func wireReport(_ host: inout HostSession) {
    let event = try! DataProvider.event(for: SampleNotifications.typical(index: 1), now: Date())
    var plain = HostEvent()
    plain.sequence = 1
    plain.event = event
    let plaintext = WireCodec.encode(plain).count
    let message = host.seal(event, sequence: 1)!
    let envelope = WireCodec.encode(message).count
    print("  plaintext HostEvent: \(plaintext) B; sealed LinkMessage: \(envelope) B (AES-GCM +\(FeatureCipher.overhead), envelope +\(envelope - plaintext - FeatureCipher.overhead))")
    for (label, chunkLength, prefix) in [("BLE, ATT MTU 23", GATTProfile.chunkLength(forATTMTU: 23), 0), ("BLE, ATT MTU 185 (iPhone typical)", GATTProfile.chunkLength(forATTMTU: 185), 0), ("BLE, ATT MTU 517", GATTProfile.chunkLength(forATTMTU: 517), 0), ("TCP link", TCPLink.defaultChunkLength, StreamFraming.lengthPrefixLength)] {
        var framer = ChunkFramer(chunkLength: chunkLength)
        let chunks = framer.frame(WireCodec.encode(message))
        let bytes = chunks.reduce(0) { $0 + $1.count + prefix }
        print("  \(label): \(bytes) B on the wire in \(chunks.count) chunk(s) (\(bytes - plaintext) B over the plaintext)")
    }
}

func cpuReport(_ suite: CipherSuite) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notifbridge-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try AccessoryStore(path: directory + "/bench.sqlite")
    let identity = try AccessoryPrivateKey.generate(suite)

    let exchangeStart = threadCPUTime()
    var (accessory, host, parameters) = try establish(suite, identity: identity)
    let exchangeCPU = threadCPUTime() - exchangeStart
    try store.saveExchange(parameters, keyID: identity.keyID, now: Date())

    print("\(suite.rawValue):")
    print("  key exchange, both sides in one process: \(microseconds(exchangeCPU)) CPU")
    wireReport(&host)

    var framer = ChunkFramer(chunkLength: GATTProfile.chunkLength(forATTMTU: 185))
    var bind = LinkMessage()
    bind.bindFeature = .with { $0.featureRef = 1; $0.featureID = host.configuration.featureID }
    for chunk in framer.frame(WireCodec.encode(bind)) { _ = accessory.received(chunk: chunk, now: .now) }

    var wall: [Duration] = []
    var cpu: [Duration] = []
    wall.reserveCapacity(count)
    cpu.reserveCapacity(count)
    let clock = ContinuousClock()
    var burst = BurstLimiter(limit: .init())
    for index in 1...count {
        let event = try DataProvider.event(for: SampleNotifications.typical(index: index), now: Date())
        let chunks = framer.frame(WireCodec.encode(host.seal(event, sequence: UInt64(index))!))
        for chunk in chunks.dropLast() { _ = accessory.received(chunk: chunk, now: .now) }
        let start = (clock.now, threadCPUTime())
        for action in accessory.received(chunk: chunks.last!, now: .now) {
            if case .deliver(let delivery) = action {
                let conditions = AlertConditions(settings: .default, minuteOfDay: 720, now: .now)
                let outcome = try store.apply(delivery.event, exchangeID: delivery.exchangeID, now: Date(), conditions: conditions, burst: &burst)
                precondition(outcome.stored, "notification \(index) was not stored")
            }
        }
        cpu.append(threadCPUTime() - start.1)
        wall.append(clock.now - start.0)
    }
    print("  accessory, last chunk → stored record (\(count) notifications, one transaction each, SQLite WAL on disk in \(directory)):")
    print("    wall time, with the commit's fsync: \(summary(wall))")
    print("    thread CPU time, without waiting for the disk: \(summary(cpu))")
}

/// NB_BENCH_ONLY=accessory, ratchet or relay runs that report alone.
let only = ProcessInfo.processInfo.environment["NB_BENCH_ONLY"]
print("NotifBridge benchmarks (\(count) notifications per suite)")
if only == nil || only == "accessory" {
    for suite in CipherSuite.allCases { try cpuReport(suite) }
}
if only == nil || only == "ratchet" { try ratchetReport() }
if only == nil || only == "relay" { try await relayReport() }
