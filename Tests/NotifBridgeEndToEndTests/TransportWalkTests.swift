import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeStore
import NotifBridgeTestSupport
import Testing

/// The simulated iPhone choosing its transports by itself (``HostSystem``): Bluetooth, then the
/// local network, then the internet, each message by the first that takes it. Both links are
/// TCP links to the accessory here (Bluetooth itself is tested in the VM); the internet is the
/// relay server and the accessory's inbox WebSocket.
@Suite("The iPhone walks from Bluetooth to the local network to the internet and back", .timeLimit(.minutes(2)))
struct TransportWalkTests {
    struct OutOfRange: Error {}

    static func add(_ index: Int) -> HostOperation {
        .add(HostNotification(source: "com.apple.MobileSMS", id: "w\(index)", sourceName: "Messages", title: "Anna", body: "walk \(index)"), .standard)
    }

    @Test("nothing lost, duplicated or alerted twice; one numbering across every transport")
    func walk() async throws {
        let directory = try TemporaryDirectory("transport-walk")
        defer { directory.remove() }
        let relay = try await RunningRelay.start(path: directory.path + "/relay.sqlite")
        try relay.store.register(accessory: InternetEndToEndTests.accessoryID, inbox: InternetEndToEndTests.inbox, post: InternetEndToEndTests.post)
        let source = RelaySource.loopback(port: relay.port)
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path + "/accessory", internet: source)

        let port = accessory.port
        let tcp: HostTransports.LinkRunner = { session, body in
            try await HostClient.connect(host: "127.0.0.1", port: port, session: session) { try await body($0) }.1
        }
        let outOfRange: HostTransports.LinkRunner = { _, _ in throw OutOfRange() }
        let client = RelayPostClient(configuration: .init(relay: "http://127.0.0.1:\(relay.port)", accessoryID: InternetEndToEndTests.accessoryID, token: InternetEndToEndTests.post.text))
        let post: InternetTransport.Post = { message throws(AccessoryMessageError) in
            try await client.send(message)
        }
        let phone = HostSystem(
            session: TestHost.session(suites: [.xWing]),
            pairingFile: InternetPairingFile(path: directory.path + "/pairing.json"),
            routing: .init(firstRetryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(50))
        )

        // In range of everything: Bluetooth.
        let near = try await phone.forward((0..<3).map(Self.add), over: HostTransports(links: [.bluetooth: tcp, .localNetwork: tcp], internet: post))
        let exchange = try #require(phone.pairing?.exchangeID)
        // Out of Bluetooth range: the attempt fails, the local network takes it, resuming the exchange.
        let home = try await phone.forward((3..<5).map(Self.add), over: HostTransports(links: [.bluetooth: outOfRange, .localNetwork: tcp], internet: post))
        // Away from home: the internet.
        let away = try await phone.forward((5..<7).map(Self.add), over: HostTransports(links: [.bluetooth: outOfRange], internet: post))
        try await TestWait.until("seven stored") { try accessory.daemon.store.notifications().count == 7 }
        // Back: Bluetooth again, and the link carries 5 and 6 again (no receipt came for them).
        let back = try await phone.forward((7..<9).map(Self.add), over: HostTransports(links: [.bluetooth: tcp, .localNetwork: tcp], internet: post))
        try await phone.close()

        #expect(near.map(\.via) == [.bluetooth, .bluetooth, .bluetooth])
        #expect(home.map(\.via) == [.localNetwork, .localNetwork])
        #expect(away.map(\.via) == [.internet, .internet])
        #expect(back.map(\.via) == [.bluetooth, .bluetooth])
        #expect((near + home + away + back).map(\.sequence) == Array(1...9))
        #expect(phone.pairing?.exchangeID == exchange, "each link resumed the one exchange")
        #expect(phone.outstandingCount == 0, "the copies of 5 and 6 were acknowledged over Bluetooth")
        let stored = try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted()
        #expect(stored == (0..<9).map { "w\($0)" })
        #expect(accessory.presenter.alertCount == 9)
        await accessory.stop()
        try await relay.stop()
    }

    @Test("with every transport out of reach the system says so instead of waiting")
    func nothingReachable() async throws {
        let directory = try TemporaryDirectory("transport-walk-none")
        defer { directory.remove() }
        let phone = HostSystem(session: TestHost.session(suites: [.xWing]), pairingFile: InternetPairingFile(path: directory.path + "/pairing.json"))
        let outOfRange: HostTransports.LinkRunner = { _, _ in throw OutOfRange() }
        let error = await #expect(throws: HostFailure.self) {
            try await phone.forward([Self.add(0)], over: HostTransports(links: [.bluetooth: outOfRange, .localNetwork: outOfRange]))
        }
        #expect(error?.description.contains("no transport reaches the accessory") == true)
    }
}
