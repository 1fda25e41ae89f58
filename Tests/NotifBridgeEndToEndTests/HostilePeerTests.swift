import Foundation
import Glibc
import NotifBridgeAccessory
import NotifBridgeHost
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// What the accessory spends on peers that never become iPhones: connections, partial-message
/// buffers, time before Hello, and log lines. Real sockets on loopback.
@Suite("Hostile peers", .timeLimit(.minutes(2)))
struct HostilePeerTests {
    /// A raw loopback socket that sends length-prefixed chunks (PROTOCOL §3.2) as a peer would,
    /// and notices when the accessory closes it.
    final class RawPeer {
        let fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, connected == 0 else { throw HostFailure(description: "cannot connect to 127.0.0.1:\(port)") }
        }

        static func connect(_ accessory: RunningAccessory) throws -> RawPeer {
            try RawPeer(port: accessory.port)
        }

        func send(_ chunks: [[UInt8]]) {
            for chunk in chunks {
                let frame = [UInt8(chunk.count & 0xFF), UInt8(chunk.count >> 8)] + chunk
                _ = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }

        /// True once the accessory closed the connection, within `timeout`.
        func isClosed(within timeout: Duration) async throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            var byte: UInt8 = 0
            while ContinuousClock.now < deadline {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 0) > 0, recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { return true }
                try await Task.sleep(for: .milliseconds(20))
            }
            return false
        }

        deinit { Glibc.close(fd) }
    }

    @Test("Connections up to the cap are served; the one past it is closed at once", arguments: [2, 3])
    func connectionCap(open: Int) async throws {
        let directory = try TemporaryDirectory("cap")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, resources: .init(maxConnections: 3))
        defer { Task { await accessory.stop() } }
        let held = try (0..<open).map { _ in try RawPeer.connect(accessory) }
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

    @Test("A connection that sends no Hello is closed after the Hello timeout, and not before it")
    func helloDeadline() async throws {
        let directory = try TemporaryDirectory("hello")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, limits: WireLimits(helloTimeout: .milliseconds(300)))
        defer { Task { await accessory.stop() } }
        let silent = try RawPeer.connect(accessory)
        #expect(try await silent.isClosed(within: TestWait.deadline))

        let patient = try await RunningAccessory.start(stateDirectory: directory.path + "-b", limits: WireLimits(helloTimeout: .seconds(30)))
        defer { Task { await patient.stop() } }
        #expect(try await RawPeer.connect(patient).isClosed(within: .milliseconds(2500)) == false, "well within the timeout it stays open")
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
        var peers: [RawPeer] = []
        for _ in 0..<10 {
            let peer = try RawPeer.connect(accessory)
            peer.send([first])
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
}
