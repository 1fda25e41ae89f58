import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
@_spi(Testing) import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// The relay inbox client as the daemon's source of internet messages.
struct RelaySource: InternetMessageSource {
    let client: RelayInboxClient

    /// The test accessory's inbox at a relay on this machine, retrying quickly.
    static func loopback(port: Int, maxRetryDelay: Duration = .seconds(60)) -> RelaySource {
        RelaySource(client: RelayInboxClient(
            configuration: .init(
                relay: "ws://127.0.0.1:\(port)", accessoryID: InternetEndToEndTests.accessoryID, token: InternetEndToEndTests.inbox.text,
                minRetryDelay: .milliseconds(50), maxRetryDelay: maxRetryDelay
            ),
            logger: Logger(label: "inbox", factory: { _ in SwiftLogNoOpLogHandler() })
        ))
    }
    var name: String { "the test relay" }
    func run(receive: @escaping @Sendable (UInt64, [UInt8]) async throws -> Void) async {
        await client.run(receive: receive)
    }

    func push(_ body: [UInt8]) async -> InternetPushResult {
        let answer = await client.push(body)
        return answer == .answered(.delivered) ? .delivered : .notDelivered(answer.explanation)
    }
}

/// iPhone → relay → accessory, each a real part: the accessory daemon makes its X-Wing exchange
/// with the simulated iPhone over its TCP link, and from then on takes messages from the relay
/// server (on a loopback socket, SQLite) through its inbox WebSocket. The test plays the iPhone's
/// transport extension: it seals events with the sending ratchet of the iPhone's own exports and
/// posts them over HTTP.
@Suite("The internet transport end to end", .timeLimit(.minutes(2)))
struct InternetEndToEndTests {
    static let accessoryID = "watch-1"
    static let inbox = try! RelayToken(randomBytes: Array(repeating: 0x31, count: 32))
    static let post = try! RelayToken(randomBytes: Array(repeating: 0x42, count: 32))

    static func event(_ index: Int) throws -> [UInt8] {
        var event = HostEvent()
        event.sequence = UInt64(1000 + index)
        event.event = try DataProvider.event(
            for: .add(HostNotification(source: "com.apple.MobileSMS", id: "n\(index)", sourceName: "Messages", title: "Anna", body: "message \(index)"), .standard),
            now: Date()
        )
        return WireCodec.encode(event)
    }

    /// A relay on a loopback port with this accessory registered, its store in `directory`, for
    /// the length of `body`.
    static func withRelay(in directory: String, _ body: @Sendable (_ client: any TestClientProtocol, _ relayStore: RelayStore) async throws -> Void) async throws {
        let relayStore = try RelayStore(path: directory + "/relay.sqlite")
        try relayStore.register(accessory: accessoryID, inbox: inbox, post: post)
        let server = RelayServer(store: relayStore, configuration: .init(port: 0), logger: Logger(label: "relay", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await server.application().test(.live) { client in try await body(client, relayStore) }
        try relayStore.close()
    }

    static func post(_ client: some TestClientProtocol, _ message: [UInt8]) async throws {
        let response = try await client.execute(
            uri: "/v1/accessories/\(accessoryID)/messages", method: .post,
            headers: [.authorization: "Bearer \(post.text)"], body: ByteBuffer(bytes: message)
        )
        #expect(response.status == .created)
    }

    @Test("exchanged over the link, then over the relay: in order and reordered, the accessory offline and catching up, a replay and a gap past 50,000 refused, nothing alerted twice")
    func relayPath() async throws {
        let directory = try TemporaryDirectory("internet-e2e")
        defer { directory.remove() }
        try await Self.withRelay(in: directory.path) { client, relayStore in
            let relayURL = "ws://127.0.0.1:\(try #require(client.port))"
            let source = RelaySource(client: RelayInboxClient(
                configuration: .init(relay: relayURL, accessoryID: Self.accessoryID, token: Self.inbox.text, minRetryDelay: .milliseconds(50)),
                logger: Logger(label: "inbox", factory: { _ in SwiftLogNoOpLogHandler() })
            ))
            let state = directory.path + "/accessory"
            var accessory = try await RunningAccessory.start(stateDirectory: state, internet: source)

            // The exchange, over the TCP link; iOS keeps the HPKE sender, which exports the keys.
            let pairing = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(suites: [.xWing])) { connection in
                _ = try await connection.waitUntilEstablished()
                return try #require(connection.pairing)
            }.0
            let chainKeys = try pairing.sender.internetChainKeys(bluetoothUUID: SimulatorIdentity.accessoryIdentifier)
            // The iPhone computes the key ID from the public key it was offered; the accessory's
            // store holds the same four bytes.
            let keyID = try #require(try accessory.daemon.store.receivingRatchet(exchangeID: pairing.exchangeID)).keyID
            var sender = try SendingRatchet(chainKey: chainKeys.hostToAccessory)
            let messages = try (0..<6).map { try Array(sender.seal(Data(Self.event($0)), keyID: keyID).serialized) }

            // In order, then 3 before 2.
            for index in [0, 1, 3, 2] { try await Self.post(client, messages[index]) }
            try await TestWait.until("four stored") { try accessory.daemon.store.notifications().count == 4 }
            try await TestWait.until("the relay's queue drained") { try relayStore.queue(of: Self.accessoryID)?.messages == 0 }
            #expect(accessory.presenter.alertCount == 4)

            // The accessory is offline: the relay keeps 4, 5 and a copy of 1 until it is back.
            await accessory.stop()
            for index in [4, 5, 1] { try await Self.post(client, messages[index]) }
            #expect(try relayStore.queue(of: Self.accessoryID)?.messages == 3)
            accessory = try await RunningAccessory.start(stateDirectory: state, internet: source)
            try await TestWait.until("six stored") { try accessory.daemon.store.notifications().count == 6 }
            try await TestWait.until("the relay's queue drained") { try relayStore.queue(of: Self.accessoryID)?.messages == 0 }
            #expect(accessory.presenter.alertCount == 2, "4 and 5 alert; the copy of 1 is refused, not shown again")

            // A message with 50,001 skipped before it (one over the keys an accessory keeps):
            // refused, acknowledged, nothing stored.
            for _ in 0...InternetRatchet.maxSkippedKeys { _ = try sender.seal(Data([0]), keyID: keyID) }
            try await Self.post(client, Array(try sender.seal(Data(Self.event(9)), keyID: keyID).serialized))
            try await TestWait.until("the far message acknowledged") { try relayStore.queue(of: Self.accessoryID)?.messages == 0 }
            let stored = try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted()
            #expect(stored == (0..<6).map { "n\($0)" })
            await accessory.stop()
        }
    }
}

extension InternetEndToEndTests {
    final class Switch: Sendable {
        private let state = Mutex(false)
        var isOn: Bool { state.withLock { $0 } }
        func turnOn() { state.withLock { $0 = true } }
    }

    /// Counts how often the daemon opened its inbox, and closed it.
    final class CountingSource: InternetMessageSource {
        let inner: RelaySource
        let opened = Mutex(0)
        let closed = Mutex(0)
        init(_ inner: RelaySource) { self.inner = inner }
        var name: String { inner.name }
        func run(receive: @escaping @Sendable (UInt64, [UInt8]) async throws -> Void) async {
            opened.withLock { $0 += 1 }
            await inner.run(receive: receive)
            closed.withLock { $0 += 1 }
        }
        func push(_ body: [UInt8]) async -> InternetPushResult { await inner.push(body) }
    }

    /// Two boxes under one relay ID, one paired and one fresh: the fresh one used to acknowledge,
    /// and so delete, every message, since it could open none.
    @Test("an accessory without internet keys leaves its inbox alone, and opens it once an exchange gives it some")
    func inboxWaitsForKeys() async throws {
        let directory = try TemporaryDirectory("internet-two")
        defer { directory.remove() }
        try await Self.withRelay(in: directory.path) { client, relayStore in
            let port = try #require(client.port)
            var paired = try await RunningAccessory.start(stateDirectory: directory.path + "/paired", internet: RelaySource.loopback(port: port))
            let pairing = try await HostClient.connect(host: "127.0.0.1", port: paired.port, session: TestHost.session(suites: [.xWing])) { connection in
                _ = try await connection.waitUntilEstablished()
                return try #require(connection.pairing)
            }.0
            let keyID = try #require(try paired.daemon.store.receivingRatchet(exchangeID: pairing.exchangeID)).keyID
            var sender = try SendingRatchet(chainKey: try pairing.sender.internetChainKeys(bluetoothUUID: SimulatorIdentity.accessoryIdentifier).hostToAccessory)
            await paired.stop()

            let fresh = CountingSource(RelaySource.loopback(port: port))
            let second = try await RunningAccessory.start(stateDirectory: directory.path + "/fresh", internet: fresh)
            for index in 0..<3 { try await Self.post(client, Array(try sender.seal(Data(Self.event(index)), keyID: keyID).serialized)) }
            // The fresh one decides before it would connect; its start has long passed that point
            // once the paired one has stored what it finds.
            paired = try await RunningAccessory.start(stateDirectory: directory.path + "/paired", internet: RelaySource.loopback(port: port))
            try await TestWait.until("the paired accessory stored all three") { try paired.daemon.store.notifications().count == 3 }
            #expect(fresh.opened.withLock { $0 } == 0)
            #expect(try second.daemon.store.notifications().isEmpty)

            // Paired too (the same simulated iPhone identity): now it holds internet keys.
            _ = try await HostClient.connect(host: "127.0.0.1", port: second.port, session: TestHost.session(suites: [.xWing])) { connection in
                try await connection.waitUntilEstablished()
            }
            try await TestWait.until("the second accessory opened its inbox") { fresh.opened.withLock { $0 } == 1 }
            await second.stop()
            await paired.stop()
        }
    }

    /// The other half of `inboxWaitsForKeys`: the exchange that gave the internet keys is
    /// forgotten (a message that did not decrypt), and the iPhone does not come back to make a
    /// new one. An accessory that kept its inbox open would acknowledge, so delete, every message
    /// from then on; it closes it, and they wait at the relay.
    @Test("an accessory whose exchange is forgotten closes its inbox: what comes next waits at the relay until a new exchange")
    func inboxClosesWhenForgotten() async throws {
        let directory = try TemporaryDirectory("internet-forget")
        defer { directory.remove() }
        try await Self.withRelay(in: directory.path) { client, relayStore in
            let source = CountingSource(RelaySource.loopback(port: try #require(client.port)))
            let accessory = try await RunningAccessory.start(stateDirectory: directory.path + "/accessory", internet: source)
            let channel = try await TCPLink.connect(host: "127.0.0.1", port: accessory.port, limits: .default)
            let (keyID, chainKey) = try await channel.withChunkLink(peer: "accessory") { link in
                // Deaf once told: the iPhone hears neither the Resync nor the fresh KeyOffer, so
                // it makes no new exchange.
                let deaf = Switch()
                var muted = link
                muted.inbound = AsyncThrowingStream { continuation in
                    let task = Task {
                        do {
                            for try await item in link.inbound where !deaf.isOn { continuation.yield(item) }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
                return try await HostClient.run(over: muted, session: TestHost.session(suites: [.xWing])) { connection in
                    _ = try await connection.waitUntilEstablished()
                    let pairing = try #require(connection.pairing)
                    let keyID = try #require(try accessory.daemon.store.receivingRatchet(exchangeID: pairing.exchangeID)).keyID
                    let chainKey = try pairing.sender.internetChainKeys(bluetoothUUID: SimulatorIdentity.accessoryIdentifier).hostToAccessory
                    try await TestWait.until("the inbox opened") { source.opened.withLock { $0 } == 1 }
                    var tampered = try #require(try connection.sealForInspection(.add(TestHost.note("evil"), .standard), sequence: 1))
                    tampered.sealed.ciphertext[tampered.sealed.ciphertext.count - 1] ^= 0x80
                    deaf.turnOn()
                    connection.sendRaw(tampered)
                    try await TestWait.until("the exchange forgotten") { accessory.presenter.resyncCount == 1 }
                    return (keyID, chainKey)
                }.0
            }
            try await TestWait.until("the inbox closed") { source.closed.withLock { $0 } == 1 }
            var sender = try SendingRatchet(chainKey: chainKey)
            try await Self.post(client, Array(try sender.seal(Data(Self.event(0)), keyID: keyID).serialized))
            #expect(source.opened.withLock { $0 } == 1, "not opened again without a new exchange")
            #expect(try relayStore.queue(of: Self.accessoryID)?.messages == 1)
            #expect(try accessory.daemon.store.notifications().isEmpty)

            _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(suites: [.xWing])) { connection in
                try await connection.waitUntilEstablished()
            }
            try await TestWait.until("the inbox opened again") { source.opened.withLock { $0 } == 2 }
            await accessory.stop()
        }
    }
}

/// A relay server on a loopback port, in this process, that can be stopped and started again on
/// the same port and database file (a restart, as far as its clients can tell).
struct RunningRelay {
    let store: RelayStore
    let port: Int
    let task: Task<Void, any Error>

    static func start(path: String, port: Int = 0) async throws -> RunningRelay {
        let store = try RelayStore(path: path)
        let server = RelayServer(store: store, configuration: .init(port: port), logger: Logger(label: "relay", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { continuation.yield($0) }).run() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else { throw HostFailure(description: "the relay did not start") }
        return RunningRelay(store: store, port: bound, task: task)
    }

    func stop() async throws {
        task.cancel()
        _ = await task.result
        try store.close()
    }
}

/// The simulated iPhone's own internet transport: the keys of the exchange it made over the
/// link saved to its pairing file, each event sealed, saved, then posted by the relay client.
@Suite("The iPhone's internet transport end to end", .timeLimit(.minutes(2)))
struct PhoneInternetTransportTests {
    static func add(_ index: Int) -> HostOperation {
        .add(HostNotification(source: "com.apple.MobileSMS", id: "p\(index)", sourceName: "Messages", title: "Anna", body: "message \(index)"), .standard)
    }

    @Test("posts through the relay; the relay restarts meanwhile: the post in between fails and burns its key, the rest arrive once")
    func relayRestart() async throws {
        let directory = try TemporaryDirectory("phone-internet")
        defer { directory.remove() }
        let relayPath = directory.path + "/relay.sqlite"
        var relay = try await RunningRelay.start(path: relayPath)
        try relay.store.register(accessory: InternetEndToEndTests.accessoryID, inbox: InternetEndToEndTests.inbox, post: InternetEndToEndTests.post)
        let port = relay.port
        let source = RelaySource.loopback(port: port, maxRetryDelay: .milliseconds(200))
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path + "/accessory", internet: source)

        // The exchange over the link; the iPhone saves its internet keys as `phone --internet-pairing` does.
        let (sent, session) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session(suites: [.xWing])) { connection in
            _ = try await connection.waitUntilEstablished()
            let sequence = try connection.send(Self.add(0))
            _ = try await connection.waitForReceipts([sequence])
            return sequence
        }
        #expect(sent == 1)
        let file = InternetPairingFile(path: directory.path + "/pairing.json")
        let pairing = try #require(session.pairing)
        try file.save(try #require(try InternetPairing(pairing, configuration: session.configuration, nextSequence: session.forwarder.nextSequence)))

        let client = RelayPostClient(configuration: .init(relay: "http://127.0.0.1:\(port)", accessoryID: InternetEndToEndTests.accessoryID, token: InternetEndToEndTests.post.text, timeout: .seconds(5)))
        let transport = try InternetTransport(file: file) { message throws(AccessoryMessageError) in
            try await client.send(message)
        }
        #expect(try await transport.send(Self.add(1)) == 2)
        #expect(try await transport.send(Self.add(2)) == 3)
        try await TestWait.until("three stored") { try accessory.daemon.store.notifications().count == 3 }

        // The relay goes away: the post fails, and its index is used up on disk all the same.
        try await relay.stop()
        await #expect(throws: AccessoryMessageError.transportUnavailable) { try await transport.send(Self.add(3)) }
        #expect(try file.load()?.sending.nextIndex == 3)

        // Back on the same port and file: the next post lands, the accessory's inbox reconnects,
        // and the message after the burnt index opens (its key was kept as skipped).
        relay = try await RunningRelay.start(path: relayPath, port: port)
        #expect(try await transport.send(Self.add(4)) == 5)
        try await TestWait.until("four stored") { try accessory.daemon.store.notifications().count == 4 }
        try await TestWait.until("the relay's queue drained") { try relay.store.queue(of: InternetEndToEndTests.accessoryID)?.messages == 0 }
        let stored = try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted()
        #expect(stored == ["p0", "p1", "p2", "p4"])
        #expect(accessory.presenter.alertCount == 4)
        await accessory.stop()
        try await relay.stop()
    }
}
