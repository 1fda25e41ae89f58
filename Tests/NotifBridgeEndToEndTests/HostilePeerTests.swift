import Foundation
import NotifBridgeAccessory
import NotifBridgeHost
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// What the accessory spends on peers that never become iPhones: connections, partial-message
/// buffers, time before Hello, and log lines. Real sockets on loopback.
@Suite("Hostile peers", .timeLimit(.minutes(2)))
struct HostilePeerTests {
    @Test("Connections up to the cap are served; the one past it is closed at once", arguments: [2, 3])
    func connectionCap(open: Int) async throws {
        let directory = try TemporaryDirectory("cap")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, resources: .init(maxConnections: 3))
        defer { Task { await accessory.stop() } }
        let held = try (0..<open).map { _ in try LoopbackSocket(port: accessory.port) }
        // Accepted connections reach the daemon in no fixed order; the phone comes after these.
        try await TestWait.until("\(open) open connections") { accessory.daemon.openConnectionCount == open }
        let phone = Task {
            try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
                try await phone.waitUntilEstablished(timeout: TestWait.deadline)
            }
        }
        if open < 3 {
            _ = try await phone.value
        } else {
            await #expect(throws: (any Error).self, "the fourth connection is closed before its key exchange") { _ = try await phone.value }
        }
        withExtendedLifetime(held) {}
    }

    /// A Sealed before any Hello is answered with Resync and KeyOffer; such a peer was once
    /// never timed out, and held its connection slot (on Bluetooth, the one central) for ever.
    @Test("A connection that sends no Hello is closed after the Hello timeout, with a LinkError, and not before it", arguments: ["nothing", "a Sealed"])
    func helloDeadline(sending first: String) async throws {
        let opening = first == "a Sealed" ? [Self.framed(Self.sealed)] : []
        let directory = try TemporaryDirectory("hello")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, limits: WireLimits(helloTimeout: .milliseconds(300)))
        defer { Task { await accessory.stop() } }
        let stalled = try LoopbackSocket(port: accessory.port)
        for bytes in opening { stalled.send(bytes) }
        let told = Self.messages(try await stalled.read(within: TestWait.deadline) { _ in false })
        #expect(told.map(\.kindName) == (opening.isEmpty ? [] : ["LinkError", "Resync", "KeyOffer"]) + ["LinkError"], "the reason comes before the close")
        #expect(told.last?.error.detail == "no Hello within 0.3 seconds")
        try await TestWait.until("the slot to be free") { accessory.daemon.openConnectionCount == 0 }

        let patient = try await RunningAccessory.start(stateDirectory: directory.path + "-b", limits: WireLimits(helloTimeout: .seconds(30)))
        defer { Task { await patient.stop() } }
        let waiting = try LoopbackSocket(port: patient.port)
        for bytes in opening { waiting.send(bytes) }
        #expect(try await waiting.closedByPeer(within: .milliseconds(2500)) == false, "well within the timeout it stays open")
    }

    /// A Sealed under a feature never bound, as one chunk.
    static var sealed: [UInt8] {
        var message = LinkMessage()
        message.sealed = .with {
            $0.featureRef = 1
            $0.ciphertext = Data(repeating: 0xAB, count: 40)
        }
        var framer = ChunkFramer(chunkLength: 4096)
        return framer.frame(WireCodec.encode(message))[0]
    }

    /// The link messages in what the accessory wrote on a TCP link (length-prefixed chunks).
    static func messages(_ stream: [UInt8]) -> [LinkMessage] {
        var reassembler = ChunkReassembler(limits: .default)
        var messages: [LinkMessage] = []
        var rest = stream[...]
        while rest.count >= 2 {
            let length = Int(rest[rest.startIndex]) | Int(rest[rest.startIndex + 1]) << 8
            guard rest.count >= 2 + length else { break }
            let chunk = rest.dropFirst(2).prefix(length)
            rest = rest.dropFirst(2 + length)
            if let bytes = try? reassembler.receive(chunk, now: .now), let message = try? WireCodec.decode(LinkMessage.self, from: bytes) {
                messages.append(message)
            }
        }
        return messages
    }

    @Test("Partial messages of many connections share one budget; refusals are logged a few at a time per origin")
    func sharedBudgetAndThrottle() async throws {
        let directory = try TemporaryDirectory("budget")
        defer { directory.remove() }
        // Room for two 128 KiB messages across all links; each link alone may reserve 512 KiB.
        let accessory = try await RunningAccessory.start(
            stateDirectory: directory.path,
            resources: .init(maxConnections: 64, reassemblyBudget: 256 * 1024, logBurst: 3)
        )
        defer { Task { await accessory.stop() } }
        let declared = UInt32(128 * 1024)
        let first = [0x01, 0x00] + withUnsafeBytes(of: declared.littleEndian, Array.init) + [0xAA]
        var peers: [LoopbackSocket] = []
        for _ in 0..<10 {
            let peer = try LoopbackSocket(port: accessory.port)
            peer.send(Self.framed(first))
            peers.append(peer)
        }
        try await accessory.presenter.waitFor("a refusal for the budget") {
            if case .refused(let detail) = $0 { detail.contains("all links may reserve together") } else { false }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(accessory.daemon.reassemblyBudget.reservedBytes == 256 * 1024, "two links hold the whole budget; the other eight reserve nothing")
        #expect(accessory.presenter.refusals.count == 3, "eight refusals from 127.0.0.1, three of them shown")
        peers.removeAll()
        try await TestWait.until("the shared budget to be released") { accessory.daemon.reassemblyBudget.reservedBytes == 0 }
    }

    /// A chunk as the TCP link frames it (PROTOCOL §3.2): its length in two bytes, little-endian.
    static func framed(_ chunk: [UInt8]) -> [UInt8] {
        [UInt8(chunk.count & 0xFF), UInt8(chunk.count >> 8)] + chunk
    }
}
