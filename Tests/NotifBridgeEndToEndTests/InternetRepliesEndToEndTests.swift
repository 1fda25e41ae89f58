import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotifBridgeAccessory
import NotifBridgeControl
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// Accessory → relay → APNs → iPhone, every part real but APNs: the person answers a
/// notification on the accessory (`notifbridge respond reply`) after the iPhone left Bluetooth
/// range; the daemon seals the reply for the internet and hands it to its relay, which pushes it
/// to a local APNs stand-in over HTTP/2 and TLS, which hands it to the simulated iPhone's system.
@Suite("Replies over the internet end to end", .timeLimit(.minutes(2)))
struct InternetRepliesEndToEndTests {
    static let bundleID = "com.example.watch-companion"
    static let deviceToken = String(repeating: "0f1e2d3c", count: 8)

    @Test("a reply made with no link reaches the iPhone's data provider through the relay and APNs")
    func replyOverTheInternet() async throws {
        let directory = try TemporaryDirectory("internet-replies")
        defer { directory.remove() }
        let quiet = Logger(label: "replies", factory: { _ in SwiftLogNoOpLogHandler() })
        let signingKey = try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", pem: StandInFixtures.text("apns-auth-key.p8"))
        // The iPhone's system side: set up once the exchange is known.
        let iPhone = Mutex<(receiver: InternetReplyReceiver?, forwarder: NotificationsForwarder, inbound: [NotificationsForwarder.Inbound])>((nil, NotificationsForwarder(), []))
        let standIn = APNsStandIn(teamID: signingKey.teamID, keyID: signingKey.keyID, publicKey: signingKey.publicKey, devices: [Self.deviceToken: Self.bundleID]) { body in
            iPhone.withLock { phone in
                guard let message = try? phone.receiver?.receive(pushBody: body), let inbound = try? phone.forwarder.messageHandler(message.data) else { return }
                phone.inbound.append(inbound)
            }
        }
        try await standIn.application(onListening: { _ in }).test(.live) { apnsClient in
            let apns = APNsClient(configuration: .init(endpoint: "https://localhost:\(try #require(apnsClient.port))", signingKey: signingKey, trustRoots: try StandInFixtures.caCertificates()), logger: quiet)
            let relayStore = try RelayStore(path: directory.path + "/relay.sqlite")
            try relayStore.register(accessory: InternetEndToEndTests.accessoryID, inbox: InternetEndToEndTests.inbox, post: InternetEndToEndTests.post)
            try await RelayServer(store: relayStore, configuration: .init(port: 0), pusher: apns, logger: quiet).application().test(.live) { relay in
                let source = RelaySource.loopback(port: try #require(relay.port))
                let accessory = try await RunningAccessory.start(stateDirectory: directory.path + "/accessory", internet: source)
                // The notification arrives over the link; then the iPhone walks away.
                let note = TestHost.withActions("m1")
                let (_, session) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(suites: [.xWing])) { connection in
                    _ = try await connection.addNotification(note, alerting: .standard)
                }
                try await TestWait.until("the accessory sees the link gone") {
                    accessory.presenter.all.contains { if case .disconnected = $0 { true } else { false } }
                }
                let pairing = try #require(session.pairing)
                let keys = try pairing.sender.internetChainKeys(bluetoothUUID: SimulatorIdentity.accessoryIdentifier)
                let keyID = InternetRatchet.keyID(publicKey: pairing.accessoryPublicKey)
                iPhone.withLock { $0.receiver = InternetReplyReceiver(ratchet: try! ReceivingRatchet(chainKey: keys.accessoryToHost), keyID: keyID) }
                let reply = ControlRequest(op: .reply, source: note.source, id: note.id, action: "reply", text: "on my way")

                // No push token registered yet: the reply fails, saying why (once the daemon's
                // inbox connection is up; before, it says that).
                var unregistered = await accessory.daemon.control.respond(reply)
                for _ in 0..<200 where unregistered.message?.contains("inbox is not connected") == true {
                    try await Task.sleep(for: .milliseconds(50))
                    unregistered = await accessory.daemon.control.respond(reply)
                }
                #expect(!unregistered.ok)
                #expect(unregistered.message?.contains("no push token") == true, "\(unregistered.message ?? "")")

                // The transport extension registers the session's push token; the next reply goes through.
                let registered = try await relay.execute(
                    uri: "/v1/accessories/\(InternetEndToEndTests.accessoryID)/push-token", method: .put,
                    headers: [.authorization: "Bearer \(InternetEndToEndTests.post.text)"],
                    body: .init(string: #"{"pushToken":"\#(Self.deviceToken)","bundleID":"\#(Self.bundleID)"}"#)
                )
                #expect(registered.status == .noContent)
                let sent = await accessory.daemon.control.respond(reply)
                #expect(sent.ok, "\(sent.message ?? "")")
                let responses = iPhone.withLock { $0.inbound }.compactMap { inbound -> NotificationResponse? in
                    if case .response(let response) = inbound { response } else { nil }
                }
                #expect(responses.map(\.userText) == ["on my way"])
                #expect(responses.first?.notificationIdentifier == note.id)
                await accessory.stop()
            }
            try relayStore.close()
            try await apns.shutdown()
        }
    }
}
