import Foundation
import NIOCore
import NIOEmbedded
@_spi(Fuzzing) @testable import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("respond list", .timeLimit(.minutes(2)))
struct RespondListTests {
    /// Stores `count` notifications straight into the daemon's store, `batch` to a transaction
    /// (so many share a received_at, as a batch's do), newest last.
    static func store(_ count: Int, in accessory: RunningAccessory, batch: Int = 100) throws {
        let store = accessory.daemon.store
        let exchange = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "id", encapsulatedKey: Data(repeating: 1, count: 32))
        try store.saveExchange(exchange, keyID: accessory.daemon.keyID, now: Date())
        var sequence: UInt64 = 0
        for start in stride(from: 0, to: count, by: batch) {
            let events = try (start..<min(count, start + batch)).map { index in
                sequence += 1
                var event = HostEvent()
                event.sequence = sequence
                let note = HostNotification(source: "com.apple.MobileSMS", id: "n\(index)", sourceName: "Messages", title: "Title \(index)", body: String(repeating: "body ", count: 80))
                event.event = try DataProvider.event(for: .add(note, .standard), now: Date())
                return (event: event, exchangeID: exchange.exchangeID)
            }
            var burst = BurstLimiter(limit: .unlimited)
            let results = try store.applyBatch(events, now: Date(), conditions: AlertConditions(settings: .default, minuteOfDay: 720, now: .now), burst: &burst)
            for result in results { _ = try result.get() }
        }
    }

    static func start(_ directory: TemporaryDirectory, storing count: Int) async throws -> RunningAccessory {
        let accessory = try await RunningAccessory.start(stateDirectory: directory.path)
        try store(count, in: accessory)
        return accessory
    }

    @Test("1,000 stored notifications all come back through the control socket, newest first")
    func thousand() async throws {
        let directory = try TemporaryDirectory("list")
        defer { directory.remove() }
        let accessory = try await Self.start(directory, storing: 1000)
        defer { Task { await accessory.stop() } }
        var ids: [String] = []
        let end = try await ControlClient.send(ControlRequest(op: .list), socketPath: accessory.daemon.configuration.controlSocketPath) { ids.append($0.id) }
        #expect(end == ControlReply(ok: true, count: 1000))
        #expect(ids == (0..<1000).reversed().map { "n\($0)" })
    }

    @Test("--limit: exactly that many, around the store's page size and the total", arguments: [
        (1, 1), (ControlService.listPageSize - 1, ControlService.listPageSize - 1), (ControlService.listPageSize, ControlService.listPageSize),
        (ControlService.listPageSize + 1, ControlService.listPageSize + 1), (249, 249), (250, 250), (251, 250), (Int.max, 250),
    ])
    func limit(limit: Int, expected: Int) async throws {
        let directory = try TemporaryDirectory("list-limit")
        defer { directory.remove() }
        let accessory = try await Self.start(directory, storing: 250)
        defer { Task { await accessory.stop() } }
        var ids: [String] = []
        let end = try await accessory.daemon.control.list(ControlRequest(op: .list, limit: limit)) { ids.append($0.id) }
        #expect(end == ControlReply(ok: true, count: expected))
        #expect(ids == (0..<250).reversed().prefix(expected).map { "n\($0)" })
    }

    @Test("a limit below 1 is refused, saying so", arguments: [0, -1])
    func badLimit(limit: Int) async throws {
        let directory = try TemporaryDirectory("list-bad")
        defer { directory.remove() }
        let accessory = try await Self.start(directory, storing: 3)
        defer { Task { await accessory.stop() } }
        let end = try await ControlClient.send(ControlRequest(op: .list, limit: limit), socketPath: accessory.daemon.configuration.controlSocketPath) { _ in
            Issue.record("nothing may be listed")
        }
        #expect(end == .failure("limit must be at least 1; it was \(limit)"))
    }

    @Test("--all lists removed notifications too, marked; without it they are left out")
    func all() async throws {
        let directory = try TemporaryDirectory("list-all")
        defer { directory.remove() }
        let accessory = try await Self.start(directory, storing: 5)
        defer { Task { await accessory.stop() } }
        for id in ["n1", "n3"] { #expect(try accessory.daemon.store.removeLocally(source: "com.apple.MobileSMS", id: id, now: Date())) }
        var present: [ListedNotification] = []
        _ = try await accessory.daemon.control.list(ControlRequest(op: .list)) { present.append($0) }
        #expect(present.map(\.id) == ["n4", "n2", "n0"])
        #expect(present.allSatisfy { !$0.removed })
        var everything: [ListedNotification] = []
        let end = try await accessory.daemon.control.list(ControlRequest(op: .list, includeRemoved: true)) { everything.append($0) }
        #expect(end.count == 5)
        #expect(everything.map(\.id) == ["n4", "n3", "n2", "n1", "n0"])
        #expect(everything.filter(\.removed).map(\.id) == ["n3", "n1"])
        #expect(everything.filter(\.removed).allSatisfy { $0.terminalLines[0].hasSuffix("(removed)") })
        #expect(everything.filter { !$0.removed }.allSatisfy { !$0.terminalLines[0].contains("(removed)") })
    }

    /// Each line is held to its own limit: exactly the limit passes, one byte more is refused,
    /// and the next line is read normally after a refused one.
    @Test("reply and request lines: limit and limit + 1", arguments: [
        (maxControlLineLength, "control request"), (maxControlReplyLineLength, "control reply line"), (8, "line"),
    ])
    func lineLimits(limit: Int, what: String) throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(ControlLineDecoder(maxLength: limit, what: what)))
        func feed(_ text: String) throws { try channel.writeInbound(channel.allocator.buffer(string: text)) }
        func read() throws -> Result<String, ControlLineTooLong>? { try channel.readInbound(as: Result<String, ControlLineTooLong>.self) }
        let atLimit = String(repeating: "a", count: limit)
        try feed(atLimit + "\n")
        #expect(try read().map { try $0.get() } == atLimit)
        try feed(atLimit + "b\n")
        #expect(try read().map { "\($0)" } == "failure(\(what) longer than \(limit) bytes)")
        // Over the limit before its newline arrives: refused at once, the rest skipped.
        try feed(atLimit + "c")
        #expect(try read().map { "\($0)" } == "failure(\(what) longer than \(limit) bytes)")
        try feed("cc\nnext\n")
        #expect(try read().map { try $0.get() } == "next")
        #expect(try read() == nil)
        _ = try channel.finish()
    }

    @Test("the daemon never writes a reply line over the client's limit")
    func hugeBody() throws {
        let listed = ListedNotification(
            source: "s", id: "i", app: "a", title: "t", body: String(repeating: "\u{1B}", count: maxControlReplyLineLength / 5),
            actions: [], alerted: false, receivedAt: Date(timeIntervalSince1970: 0)
        )
        let line = ControlService.encode(ControlReply(ok: true, notification: listed))
        #expect(line.utf8.count <= maxControlReplyLineLength)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try decoder.decode(ControlReply.self, from: Data(line.utf8))
        #expect(decoded.notification?.bodyOmitted == true && decoded.notification?.body == nil && decoded.notification?.title == "t")
        let small = ControlService.encode(ControlReply(ok: true, notification: ListedNotification(
            source: "s", id: "i", app: "a", title: "t", body: "b", actions: [], alerted: false, receivedAt: Date(timeIntervalSince1970: 0)
        )))
        #expect(!small.contains("bodyOmitted") && small.contains("\"body\":\"b\""))
    }
}
