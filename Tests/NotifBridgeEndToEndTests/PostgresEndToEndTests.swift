import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayPostgres
import NotifBridgeStore
import NotifBridgeTestSupport
import Testing

/// iPhone → relay → accessory with the relay on PostgreSQL as two instances: the iPhone posts to
/// one, the accessory's inbox is open on the other, and the database's notifications carry the
/// wake-up between them.
@Suite("The internet transport through two relay instances on PostgreSQL", .enabled(if: TestPostgres.url != nil, "set NOTIFBRIDGE_TEST_POSTGRES (.ci/run does)"), .timeLimit(.minutes(2)))
struct PostgresEndToEndTests {
    @Test("posted to one instance, delivered by the other, stored once each")
    func twoInstances() async throws {
        try await TestPostgres.withStores(2) { stores in
            let directory = try TemporaryDirectory("pg-e2e")
            defer { directory.remove() }
            let logger = Logger(label: "relay", factory: { _ in SwiftLogNoOpLogHandler() })
            try await stores[0].register(accessory: InternetEndToEndTests.accessoryID, inbox: InternetEndToEndTests.inbox, post: InternetEndToEndTests.post)
            try await RelayServer(store: stores[0], configuration: .init(port: 0), logger: logger).application().test(.live) { one in
                try await RelayServer(store: stores[1], configuration: .init(port: 0), logger: logger).application().test(.live) { two in
                    let source = RelaySource.loopback(port: try #require(two.port))
                    let accessory = try await RunningAccessory.start(stateDirectory: directory.path + "/accessory", internet: source)
                    let (_, session) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(suites: [.xWing])) { connection in
                        _ = try await connection.waitUntilEstablished()
                    }
                    let file = InternetPairingFile(path: directory.path + "/pairing.json")
                    let pairing = try #require(session.pairing)
                    try file.save(try #require(try InternetPairing(pairing, configuration: session.configuration, nextSequence: session.forwarder.nextSequence)))
                    let client = RelayPostClient(configuration: .init(relay: "http://127.0.0.1:\(try #require(one.port))", accessoryID: InternetEndToEndTests.accessoryID, token: InternetEndToEndTests.post.text))
                    let transport = try InternetTransport(file: file) { message throws(AccessoryMessageError) in
                        try await client.send(message)
                    }
                    await stores[1].waitUntilListening()
                    for index in 0..<3 {
                        _ = try await transport.send(PhoneInternetTransportTests.add(index))
                    }
                    try await TestWait.until("three stored") { try accessory.daemon.store.notifications().count == 3 }
                    try await TestWait.until("the queue drained") { try await stores[0].queue(of: InternetEndToEndTests.accessoryID)?.messages == 0 }
                    #expect(accessory.presenter.alertCount == 3)
                    await accessory.stop()
                }
            }
        }
    }
}
