import Foundation
import Logging
@testable import NotifBridgeAccessory
import NIOCore
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("Link kinds: each link's rules follow what carries it")
struct LinkKindTests {
    @Test("A TCP peer's address gives its link's kind", arguments: [
        ("127.0.0.1", LinkKind.loopback), ("127.200.3.4", .loopback), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
        ("192.168.1.20", .localNetwork), ("::ffff:192.168.1.20", .localNetwork), ("fe80::1", .localNetwork),
        ("10.127.0.1", .localNetwork), (nil, .localNetwork),
    ] as [(String?, LinkKind)])
    func tcpKind(address: String?, kind: LinkKind) {
        #expect(LinkKind.tcp(peerAddress: address) == kind)
    }

    @Test("A TCP peer is named as address and port, an IPv6 address in brackets", arguments: [
        ("192.0.2.7", 54321, "192.0.2.7:54321"), ("::1", 7420, "[::1]:7420"), ("2001:db8::1", 1, "[2001:db8::1]:1"),
    ])
    func peerLabel(address: String, port: Int, label: String) throws {
        #expect(try SocketAddress(ipAddress: address, port: port).peerLabel == label)
    }

    /// One accessory, one P-256 key: the suite is refused on a local-network link only, whatever
    /// address the accessory listens on.
    @Test("P-256 is refused on a local-network link and accepted on loopback and Bluetooth links", arguments: LinkKind.allCases)
    func p256PerLink(kind: LinkKind) async throws {
        let directory = try TemporaryDirectory("link-kind")
        defer { directory.remove() }
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, suite: .p256),
            presenter: presenter,
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (accessoryEnd, phoneEnd) = ChunkLink.pair(kind: kind)
        let serving = Task { await daemon.serve(accessoryEnd) }
        defer { serving.cancel() }
        let outcome: Result<String, any Error>
        do {
            let (established, _) = try await HostClient.run(over: phoneEnd, session: TestHost.session(suites: [.p256])) { connection in
                // Generous: the suite starts with every other test, on two cores.
                try await connection.waitUntilEstablished(timeout: .seconds(60))
            }
            outcome = .success(established.suite)
        } catch {
            outcome = .failure(error)
        }
        phoneEnd.close()
        await serving.value
        switch (kind, outcome) {
        case (.localNetwork, .failure(let error)):
            #expect("\(error)".contains("P256 is refused on this link"), "\(error)")
        case (.localNetwork, .success(let suite)):
            Issue.record("a local-network link completed a \(suite) exchange")
        case (_, .success(let suite)):
            #expect(suite == CipherSuite.p256.rawValue)
        case (_, .failure(let error)):
            Issue.record("a \(kind) link refused P-256: \(error)")
        }
    }
}
