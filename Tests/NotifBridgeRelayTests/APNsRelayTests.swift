import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
@_spi(Testing) import NotifBridgeRelay
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// Accessory → relay → APNs → iPhone: the accessory seals a reply with its accessory → host
/// ratchet and sends it as a push frame on its inbox; the relay pushes it over HTTP/2 and TLS
/// with a provider token to a local APNs stand-in, which hands it to the simulated iPhone's
/// system, which opens it and calls the data provider's message handler.
@Suite("Replies through the relay and APNs", .timeLimit(.minutes(2)))
struct APNsRelayTests {
    static let bundleID = "com.example.watch-companion"
    static let deviceToken = String(repeating: "a1b2c3d4", count: 8)
    static let sessionID = UUID(uuidString: "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B")!
    static let quiet = Logger(label: "apns-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The accessory's reply sender and the iPhone's receiver of one X-Wing exchange.
    static func exchange() throws -> (InternetReplySender, InternetReplyReceiver) {
        let key = try AccessoryPrivateKey(suite: .xWing, secretRepresentation: Data(0..<32))
        let identifier = "7A0C2B64-2F1D-4E55-9A6B-3C8D1E0F4A21"
        let sender = try SenderSession(suite: .xWing, accessoryPublicKey: key.publicKeyRepresentation, identifier: identifier)
        let recipient = try RecipientSession(privateKey: key, parameters: sender.parameters)
        let keyID = InternetRatchet.keyID(publicKey: key.publicKeyRepresentation)
        return (
            InternetReplySender(ratchet: try SendingRatchet(chainKey: try recipient.internetChainKeys(bluetoothUUID: identifier).accessoryToHost), keyID: keyID),
            InternetReplyReceiver(ratchet: try ReceivingRatchet(chainKey: try sender.internetChainKeys(bluetoothUUID: identifier).accessoryToHost), keyID: keyID)
        )
    }

    static func response(_ text: String) -> AccessoryEvent {
        var event = AccessoryEvent()
        event.response = .with {
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-1")
            $0.actionIdentifier = "reply"
            $0.userText = text
        }
        return event
    }

    /// Sends `frames` on the accessory's inbox and returns the `pushed` answers, one per push.
    static func push(_ client: some TestClientProtocol, _ frames: [RelayFrame]) async throws -> [RelayFrame] {
        let port = try #require(client.port)
        let answers = Mutex<[RelayFrame]>([])
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/v1/accessories/\(RelayServerTests.accessory)/inbox",
            configuration: .init(additionalHeaders: [.authorization: "Bearer \(RelayServerTests.inbox.text)"]),
            logger: quiet
        ) { inbound, outbound, _ in
            var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            for frame in frames {
                try await outbound.write(.binary(ByteBuffer(bytes: frame.encoded())))
                guard case .binary(let buffer) = try await iterator.next() else { break }
                let answer = try RelayFrame(decoding: Array(buffer.readableBytesView))
                answers.withLock { $0.append(answer) }
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return answers.withLock { $0 }
    }

    static func register(_ client: some TestClientProtocol, token: String, body: String) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/v1/accessories/\(RelayServerTests.accessory)/push-token", method: .put,
            headers: [.authorization: "Bearer \(token)", .contentType: "application/json"], body: ByteBuffer(string: body)
        ).status
    }

    @Test("a reply reaches the iPhone's data provider; an unregistered, an unknown and a forged push each get their own status")
    func replies() async throws {
        let signingKey = try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", pem: StandInFixtures.text("apns-auth-key.p8"))
        var (sender, receiver) = try Self.exchange()
        let first = try Array(sender.push(Self.response("on my way"), sessionIdentifier: Self.sessionID).jsonBody())
        let second = try Array(sender.push(Self.response("five minutes"), sessionIdentifier: Self.sessionID).jsonBody())
        let iPhone = Mutex((receiver: receiver, forwarder: NotificationsForwarder(), inbound: [NotificationsForwarder.Inbound]()))
        let standIn = APNsStandIn(teamID: signingKey.teamID, keyID: signingKey.keyID, publicKey: signingKey.publicKey, devices: [Self.deviceToken: Self.bundleID]) { body in
            iPhone.withLock { phone in
                guard let message = try? phone.receiver.receive(pushBody: body), let inbound = try? phone.forwarder.messageHandler(message.data) else { return }
                phone.inbound.append(inbound)
            }
        }
        let directory = try TemporaryDirectory("relay-apns")
        defer { directory.remove() }
        try await standIn.application(onListening: { _ in }).test(.live) { apnsClient in
            let apns = APNsClient(
                configuration: .init(endpoint: "https://localhost:\(try #require(apnsClient.port))", signingKey: signingKey, trustRoots: try StandInFixtures.caCertificates()),
                logger: Self.quiet
            )
            let store = try RelayStore(path: directory.path + "/relay.sqlite")
            try store.register(accessory: RelayServerTests.accessory, inbox: RelayServerTests.inbox, post: RelayServerTests.post)
            let log = CapturedLog()
            let relay = RelayServer(store: store, configuration: .init(port: 0, logBurst: 2), pusher: apns, logger: Logger(label: "relay", factory: { _ in log }))
            try await relay.application().test(.live) { client in
                // Before the companion app registered its push token.
                #expect(try await Self.push(client, [.push(id: 1, body: first)]) == [.pushed(id: 1, status: .noPushToken)])

                // Registration: the post token only, a body of the right shape.
                #expect(try await Self.register(client, token: RelayServerTests.inbox.text, body: #"{"pushToken":"\#(Self.deviceToken)","bundleID":"\#(Self.bundleID)"}"#) == .unauthorized)
                #expect(try await Self.register(client, token: RelayServerTests.post.text, body: #"{"pushToken":"xyz","bundleID":"\#(Self.bundleID)"}"#) == .badRequest)
                #expect(try await Self.register(client, token: RelayServerTests.post.text, body: #"{"pushToken":"\#(Self.deviceToken)","bundleID":"\#(Self.bundleID)"}"#) == .noContent)

                // Delivered, and a body that is no push body is refused by the relay itself.
                let answers = try await Self.push(client, [.push(id: 2, body: first), .push(id: 3, body: Array("not json".utf8)), .push(id: 4, body: second)])
                #expect(answers == [.pushed(id: 2, status: .delivered), .pushed(id: 3, status: .refused), .pushed(id: 4, status: .delivered)])
                let texts = iPhone.withLock { $0.inbound }.compactMap { inbound -> String? in
                    if case .response(let response) = inbound { response.userText } else { nil }
                }
                #expect(texts == ["on my way", "five minutes"])
                #expect(apns.lastHTTPVersion == .http2, "APNs takes HTTP/2 only")

                // A device token APNs does not know: refused for good.
                #expect(try await Self.register(client, token: RelayServerTests.post.text, body: #"{"pushToken":"00ff","bundleID":"\#(Self.bundleID)"}"#) == .noContent)
                #expect(try await Self.push(client, [.push(id: 5, body: second), .push(id: 6, body: second)]) == [.pushed(id: 5, status: .refused), .pushed(id: 6, status: .refused)])
                #expect(standIn.answers.withLock { $0 } == ["200 ", "200 ", "400 BadDeviceToken", "400 BadDeviceToken"])
                // Three pushes not delivered, two lines: the accessory's share of refusal lines.
                #expect(log.messages(at: .notice).filter { $0.hasPrefix("push") } == ["push refused: not an accessory push body", "push not delivered"])
            }
            try store.close()
            try await apns.shutdown()
        }
    }

    @Test("a relay without an APNs key says so; the inbox stays open")
    func notConfigured() async throws {
        var (sender, _) = try Self.exchange()
        let body = try Array(sender.push(Self.response("hi"), sessionIdentifier: Self.sessionID).jsonBody())
        let directory = try TemporaryDirectory("relay-apns-none")
        defer { directory.remove() }
        try await RelayServerTests.withRelay(at: directory.path + "/relay.sqlite") { _, client in
            let answers = try await Self.push(client, [.push(id: 9, body: body), .push(id: 10, body: body)])
            #expect(answers == [.pushed(id: 9, status: .notConfigured), .pushed(id: 10, status: .notConfigured)])
        }
    }

    /// An APNs that takes every push and counts them.
    final class CountingPusher: APNsPushing {
        let pushed = Mutex(0)

        func push(_ body: [UInt8], to target: PushTarget) async -> RelayFrame.PushStatus {
            pushed.withLock { $0 += 1 }
            return .delivered
        }
    }

    @Test("an accessory past its push rate is told to try later, and APNs sees none of those pushes")
    func pushRate() async throws {
        var (sender, _) = try Self.exchange()
        let body = try Array(sender.push(Self.response("hi"), sessionIdentifier: Self.sessionID).jsonBody())
        let directory = try TemporaryDirectory("relay-push-rate")
        defer { directory.remove() }
        let apns = CountingPusher()
        let log = CapturedLog()
        let configuration = RelayServer.Configuration(port: 0, pushRate: RateLimit(burst: 2, interval: .seconds(3600)))
        try await RelayServerTests.withRelay(
            at: directory.path + "/relay.sqlite", configuration: configuration, pusher: apns, logger: Logger(label: "relay", factory: { _ in log })
        ) { _, client in
            #expect(try await Self.register(client, token: RelayServerTests.post.text, body: #"{"pushToken":"\#(Self.deviceToken)","bundleID":"\#(Self.bundleID)"}"#) == .noContent)
            let answers = try await Self.push(client, (1...3).map { .push(id: $0, body: body) })
            #expect(answers == [.pushed(id: 1, status: .delivered), .pushed(id: 2, status: .delivered), .pushed(id: 3, status: .tryLater)])
            // A new connection does not start a new allowance.
            #expect(try await Self.push(client, [.push(id: 4, body: body)]) == [.pushed(id: 4, status: .tryLater)])
        }
        #expect(apns.pushed.withLock { $0 } == 2)
        #expect(log.messages(at: .notice).filter { $0.hasPrefix("push") } == Array(repeating: "push refused: over the accessory's push rate", count: 2))
    }

    @Test("APNs answers sorted: retry later, or never", arguments: [
        (200, "", RelayFrame.PushStatus.delivered), (400, "BadDeviceToken", .refused), (403, "ExpiredProviderToken", .tryLater),
        (403, "InvalidProviderToken", .refused), (410, "Unregistered", .refused), (413, "PayloadTooLarge", .refused),
        (429, "TooManyRequests", .tryLater), (500, "InternalServerError", .tryLater), (503, "ServiceUnavailable", .tryLater),
    ])
    func statuses(_ code: UInt, _ reason: String, _ expected: RelayFrame.PushStatus) {
        #expect(APNsClient.status(for: code, reason: reason) == expected)
    }
}
