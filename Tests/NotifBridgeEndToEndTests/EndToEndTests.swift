import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeCrypto
@_spi(Testing) import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("End to end over loopback TCP", .timeLimit(.minutes(2)))
struct EndToEndTests {
    @Test("The demo handful is exchanged, decrypted, stored and acknowledged", arguments: CipherSuite.allCases)
    func fullFlow(suite: CipherSuite) async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, suite: suite)
        defer { Task { await accessory.stop() } }

        let operations = SampleNotifications.demo(now: Date())
        let (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            let established = try await connection.waitUntilEstablished()
            #expect(established.suite == suite.rawValue)
            #expect(!established.resumed)
            return try await TestHost.forward(operations, over: connection)
        }
        #expect(receipts.count == operations.count)
        #expect(receipts.values.allSatisfy { $0.stored })
        #expect(receipts.values.filter(\.alerted).count == 6)

        let shown = try accessory.daemon.store.notifications()
        #expect(shown.count == 6, "seven added, the call removed")
        #expect(!shown.contains { $0.notificationIdentifier == "call-2203" })
        let edited = try #require(shown.first { $0.notificationIdentifier == "msg-4712" })
        #expect(edited.notification.body.plainText == "I booked a table at 12:45 👍 (edited)")
        #expect(edited.alerted, "the update kept the alerted state")
        let family = try #require(shown.first { $0.notificationIdentifier == "msg-4713" })
        #expect(family.notification.body.plainText == "Look who learned to wave [waving baby genmoji] 👋🏽🇩🇪")
        #expect(shown.contains { $0.notification.title == "山田太郎" })
    }

    @Test("A tampered ciphertext is refused with a resync; the host re-keys and the daemon keeps serving")
    func tamperedCiphertext() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        let keyBefore = accessory.daemon.keyID

        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            let first = try await connection.waitUntilEstablished()
            _ = try await TestHost.forward([.add(TestHost.note("before"), .standard)], over: connection)
            var tampered = try #require(try connection.sealForInspection(.add(TestHost.note("evil"), .standard), sequence: 2))
            tampered.sealed.ciphertext[tampered.sealed.ciphertext.count - 1] ^= 0x80
            connection.sendRaw(tampered)
            // The accessory answers Resync and a fresh KeyOffer; the session redoes the exchange.
            let second = try await connection.waitUntilEstablished()
            #expect(second.exchangeID != first.exchangeID)
            let receipts = try await TestHost.forward([.add(TestHost.note("after"), .standard)], over: connection)
            #expect(receipts.values.allSatisfy { $0.alerted })
        }
        #expect(accessory.presenter.resyncCount == 1)
        #expect(accessory.daemon.keyID != keyBefore, "a fresh key was generated and offered")
        #expect(try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted() == ["after", "before"])

        // Another host can still connect and deliver afterwards.
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            _ = try await TestHost.forward([.add(TestHost.note("later"), .standard)], over: connection)
        }
        #expect(try accessory.daemon.store.notifications().count == 3)
    }

    @Test("A restarted accessory keeps its key, its exchange and its notifications; the host resumes")
    func restart() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let first = try await RunningAccessory.start(stateDirectory: directory.path)
        let keyID = first.daemon.keyID
        let (exchangeID, session) = try await HostClient.connect(host: "127.0.0.1", port: first.port, session: TestHost.session()) { connection in
            let established = try await connection.waitUntilEstablished()
            _ = try await TestHost.forward([.add(TestHost.note("one"), .standard), .add(TestHost.note("two"), .standard)], over: connection)
            return established.exchangeID
        }
        await first.stop()

        let second = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await second.stop() } }
        #expect(second.daemon.keyID == keyID)
        #expect(try second.daemon.store.notifications().count == 2)
        let (receipts, _) = try await HostClient.connect(host: "127.0.0.1", port: second.port, session: session) { connection in
            let established = try await connection.waitUntilEstablished()
            #expect(established.resumed)
            #expect(established.exchangeID == exchangeID)
            return try await TestHost.forward([.add(TestHost.note("three"), .standard), .add(TestHost.note("one"), .standard)], over: connection)
        }
        #expect(receipts.count == 2)
        #expect(try second.daemon.store.notifications().map(\.notificationIdentifier).sorted() == ["one", "three", "two"])
        #expect(second.presenter.resyncCount == 0)
    }

    @Test("An oversized frame closes only its own connection; other hosts and stored data are untouched")
    func oversizedFrame() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }

        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { good in
            try await good.waitUntilEstablished()
            _ = try await TestHost.forward([.add(TestHost.note("kept"), .standard)], over: good)

            _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { bad in
                try await bad.waitUntilEstablished()
                // A frame header declaring more than maxChunkLength (16 KiB): refused before buffering.
                bad.sendRawChunks([Array(repeating: 0xAB, count: WireLimits.defaultMaxChunkLength + 1)])
                var sawError = false
                while let event = try await bad.nextEvent(timeout: .seconds(10)) {
                    if case .peerError(let code, _) = event { sawError = code == "tooLarge" }
                    if case .closed = event { break }
                }
                #expect(sawError)
            }
            _ = try await TestHost.forward([.add(TestHost.note("still"), .standard)], over: good)
        }
        #expect(accessory.presenter.refusals.count == 1)
        #expect(try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted() == ["kept", "still"])
    }

    @Test("A partial message on a quiet link is dropped after the timeout, with nothing more sent")
    func idlePartialMessage() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, limits: WireLimits(partialMessageTimeout: .milliseconds(200)))
        defer { Task { await accessory.stop() } }
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            var framer = ChunkFramer(chunkLength: 64)
            let chunks = framer.frame(Array(repeating: UInt8(7), count: 500))
            connection.sendRawChunks([chunks[0]])
            try await TestWait.until("the partial message's refusal") { !accessory.presenter.refusals.isEmpty }
            #expect(accessory.presenter.refusals.count == 1)
            #expect(accessory.presenter.refusals.first?.contains("incomplete") == true)
            // The link still works.
            _ = try await TestHost.forward([.add(TestHost.note("fine"), .standard)], over: connection)
        }
    }

    @Test("The host refuses an event over the accessory's advertised maximum; the next is delivered")
    func advertisedMaximum() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path, limits: WireLimits(maxMessageLength: 2000))
        defer { Task { await accessory.stop() } }
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            var big = TestHost.note("big")
            big.attachments = [.init(type: "public.jpeg", base64: Data(repeating: 0xFF, count: 3000).base64EncodedString())]
            #expect(throws: HostFailure.self) { try connection.send(.add(big, .standard)) }
            let receipts = try await TestHost.forward([.add(TestHost.note("small"), .standard)], over: connection)
            #expect(receipts.keys.sorted() == [1], "the refused event consumed no sequence number")
        }
        #expect(try accessory.daemon.store.notifications().map(\.notificationIdentifier) == ["small"])
    }

    @Test("addNotification returns whether the accessory alerted, and throws coordinationTimeout without a receipt in time")
    func addNotificationResult() async throws {
        let directory = try TemporaryDirectory("e2e")
        defer { directory.remove() }
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        defer { Task { await accessory.stop() } }
        _ = try await HostClient.connect(host: "127.0.0.1", port: accessory.port, session: TestHost.session()) { phone in
            try await phone.waitUntilEstablished()
            #expect(try await phone.addNotification(TestHost.note("loud"), alerting: .standard) == true)
            #expect(try await phone.addNotification(TestHost.note("quiet"), alerting: HostAlerting(shouldAlert: false)) == false)
            await #expect(throws: AccessoryError.coordinationTimeout) {
                try await phone.addNotification(TestHost.note("late"), alerting: .standard, timeout: .nanoseconds(1))
            }
            // The late one is still delivered; only the answer came too late.
            _ = try await phone.waitForReceipts(phone.unacknowledged)
        }
        #expect(try accessory.daemon.store.notifications().map(\.notificationIdentifier).sorted() == ["late", "loud", "quiet"])
    }

    @Test("Local-network listeners refuse P-256 before binding")
    func p256OnLocalNetwork() throws {
        #expect(throws: AccessoryConfiguration.Invalid.self) {
            try AccessoryConfiguration(stateDirectory: "/nonexistent", host: "0.0.0.0", suite: .p256).validate()
        }
        try AccessoryConfiguration(stateDirectory: "/nonexistent", host: "0.0.0.0", suite: .xWing).validate()
        try AccessoryConfiguration(stateDirectory: "/nonexistent", host: "127.0.0.1", suite: .p256).validate()
    }

    @Test("The commit window: 0 and the maximum are taken, one past either end is refused", arguments: [
        (Duration.zero, true), (.milliseconds(-1), false), (AccessoryConfiguration.maxCommitWindow, true),
        (AccessoryConfiguration.maxCommitWindow + .milliseconds(1), false),
    ])
    func commitWindowBounds(window: Duration, valid: Bool) {
        let configuration = AccessoryConfiguration(stateDirectory: "/nonexistent", commitWindow: window)
        #expect((try? configuration.validate()) != nil ? valid : !valid)
    }

    @Test("The refusal of a commit window speaks in the option's unit, or in seconds past what an Int holds", arguments: [
        (Duration.milliseconds(500), "not 500"),
        (.milliseconds(Int64.max), "not 9.223372036854776e+15 seconds"),
    ])
    func commitWindowMessage(window: Duration, shown: String) {
        let configuration = AccessoryConfiguration(stateDirectory: "/nonexistent", commitWindow: window)
        #expect(performing: { try configuration.validate() }, throws: { "\($0)" == "--commit-window must be 0...100 milliseconds, \(shown)" })
    }

    /// A state directory whose control socket path is at the limit is served, and answers on it;
    /// one byte more is refused before the key and the store are made. The limit was 107 once
    /// (Linux's sun_path), but NIO takes at most 103 bytes, so 104 to 107 passed the check and
    /// the start failed after the key was made.
    @Test("A state directory whose control socket path is at the limit is served, one byte more is refused", arguments: [0, 1])
    func stateDirectoryLength(pastLimit: Int) async throws {
        let base = try TemporaryDirectory("sock")
        defer { base.remove() }
        let length = AccessoryConfiguration.maxSocketPathLength + pastLimit
        let directory = base.path + "/" + String(repeating: "d", count: length - base.path.utf8.count - "/".count - "/control.sock".count)
        let configuration = AccessoryConfiguration(stateDirectory: directory)
        #expect(configuration.controlSocketPath.utf8.count == length)
        guard pastLimit == 0 else {
            #expect(performing: { try configuration.validate() }, throws: {
                "\($0)".contains("is \(length) bytes, and a Unix socket path is at most \(AccessoryConfiguration.maxSocketPathLength)")
            })
            #expect(!FileManager.default.fileExists(atPath: directory))
            return
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let accessory = try await RunningAccessory.start(stateDirectory: directory)
        let reply = try await ControlClient.send(ControlRequest(op: .list), socketPath: configuration.controlSocketPath)
        #expect(reply.ok, "\(reply.message ?? "")")
        await accessory.stop()
    }

    /// Events that arrive within the window share one commit; each still gets its receipt only
    /// once it is stored, with no window and with the longest.
    @Test("Every event is stored and acknowledged with no commit window and with the longest", arguments: [Duration.zero, AccessoryConfiguration.maxCommitWindow])
    func commitWindowDelivery(window: Duration) async throws {
        let directory = try TemporaryDirectory("window")
        defer { directory.remove() }
        let presenter = RecordingPresenter()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, commitWindow: window),
            policy: .unlimitedBursts,
            presenter: presenter,
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (accessoryEnd, phoneEnd) = ChunkLink.pair(kind: .loopback)
        let serving = Task { await daemon.serve(accessoryEnd) }
        let (receipts, _) = try await HostClient.run(over: phoneEnd, session: TestHost.session()) { connection in
            try await connection.waitUntilEstablished()
            return try await TestHost.forward((1...20).map { .add(TestHost.note("w\($0)"), .standard) }, over: connection)
        }
        phoneEnd.close()
        await serving.value
        #expect(receipts.count == 20 && receipts.values.allSatisfy(\.stored))
        #expect(try daemon.store.notifications().count == 20)
    }
}
