import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket
import NotifBridgeRelay
import NotifBridgeRelayCore
@_spi(Testing) import NotifBridgeRelayPostgres
import NotifBridgeTestSupport
import Testing

/// The relay on PostgreSQL: the store's rules as on SQLite, several instances numbering one
/// accessory's posts, and an inbox open on one instance woken by a post to another.
@Suite("Relay on PostgreSQL", .enabled(if: TestPostgres.url != nil, "set NOTIFBRIDGE_TEST_POSTGRES (.ci/run does)"), .timeLimit(.minutes(2)))
struct PostgresRelayTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let limits = RelayLimits(maxMessageLength: 100, maxQueuedMessages: 3, maxQueuedBytes: 172, window: 2, timeToLive: .seconds(60))

    @Test("the store's rules: numbering, limits at their boundaries, expiry, tokens, and commits that wait for the disk")
    func storeRules() async throws {
        let now = now
        try await TestPostgres.withStores(1, limits: Self.limits) { stores in
            let store = stores[0]
            #expect(try await store.synchronousCommit() == "on")
            try await store.register(accessory: "watch-1", inbox: RelayServerTests.inbox, post: RelayServerTests.post)
            let results = try await store.postBatch([
                (relayMessage(1), "watch-1"), (relayMessage(9, length: 101), "watch-1"), (relayMessage(2), "nobody"),
                (relayMessage(3), "watch-1"), (relayMessage(4), "watch-1"), (relayMessage(5), "watch-1"),
            ], now: now)
            let outcomes = results.map { result -> String in
                switch result {
                case .success(let seq): "\(seq)"
                case .failure(let error as RelayError): error.code.rawValue
                case .failure(let error): "\(type(of: error))"
                }
            }
            #expect(outcomes == ["1", "tooLarge", "UnknownRelayAccessory", "2", "3", "queueFull"])
            #expect(try await store.queue(of: "watch-1") == .init(messages: 3, bytes: 108))
            #expect(try await store.fetch(for: "watch-1", after: 1, limit: 10, now: now).map(\.seq) == [2, 3])
            try await store.forget(for: "watch-1", upTo: 1)
            #expect(try await store.queue(of: "watch-1") == .init(messages: 2, bytes: 72))
            // Expiry: the time to live is 60 s.
            #expect(try await store.fetch(for: "watch-1", after: 0, limit: 10, now: now.addingTimeInterval(60)).isEmpty)
            #expect(try await store.sweep(now: now.addingTimeInterval(60)) == 2)
            #expect(try await store.queue(of: "watch-1") == .init(messages: 0, bytes: 0))
            #expect(try await store.postBatch([(relayMessage(6), "watch-1")], now: now)[0].get() == 4, "numbers go on after a forget and a sweep")
            #expect(try await store.authorizes(RelayServerTests.inbox.text, accessory: "watch-1", as: .inbox))
            #expect(try await !store.authorizes(RelayServerTests.inbox.text, accessory: "watch-1", as: .post))
            #expect(try await !store.authorizes(RelayServerTests.inbox.text, accessory: "watch-2", as: .inbox))
            let atLimit = (1...maxDigestLookup - 1).map { "absent-\($0)" } + ["watch-1"]
            #expect(try await store.inboxDigests(of: atLimit) == ["watch-1": RelayToken.digest(of: RelayServerTests.inbox.text)])
            await #expect(throws: RelayError.self) { try await store.inboxDigests(of: atLimit + ["watch-2"]) }
        }
    }

    @Test("two instances posting at once for one accessory: every number once, none skipped, the queue exact")
    func twoInstancesNumberOnce() async throws {
        let now = now
        try await TestPostgres.withStores(2, limits: RelayLimits(maxQueuedMessages: 1000)) { stores in
            try await stores[0].register(accessory: "watch-1", inbox: RelayServerTests.inbox, post: RelayServerTests.post)
            let numbers = try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for task in 0..<8 {
                    group.addTask {
                        var numbers: [UInt64] = []
                        for index in 0..<10 {
                            numbers.append(try await stores[task % 2].postBatch([(relayMessage(UInt8(index)), "watch-1")], now: now)[0].get())
                        }
                        return numbers
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(numbers.sorted() == Array(1...80))
            #expect(try await stores[1].queue(of: "watch-1") == .init(messages: 80, bytes: 80 * 36))
        }
    }

    /// Each batch locked its accessories' rows in the order of its posts: a batch for A then B on
    /// one instance and one for B then A on the other could deadlock, and PostgreSQL failed a
    /// whole batch (500 for each post in it).
    @Test("two instances posting batches for the same accessories in opposite orders never deadlock")
    func oppositeOrders() async throws {
        let now = now
        try await TestPostgres.withStores(2, limits: RelayLimits(maxQueuedMessages: 1000)) { stores in
            // Upper and lower case: a collation that sorts "a" before "B" is not code-point order.
            for id in ["watch-a", "watch-B", "watch-c"] {
                try await stores[0].register(accessory: id, inbox: RelayServerTests.inbox, post: RelayServerTests.post)
            }
            let orders = [["watch-a", "watch-B", "watch-c"], ["watch-c", "watch-B", "watch-a"]]
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for task in 0..<4 {
                    group.addTask {
                        var failures: [String] = []
                        for index in 0..<40 {
                            let batch = orders[task % 2].map { (relayMessage(UInt8(index)), $0) }
                            for case .failure(let error) in try await stores[task % 2].postBatch(batch, now: now) { failures.append("\(error)") }
                        }
                        return failures
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(try await stores[1].queue(of: "watch-B") == .init(messages: 160, bytes: 160 * 36))
        }
    }

    /// One inbox per accessory held only within an instance: behind a load balancer, two
    /// instances delivered the same messages side by side.
    @Test("an inbox opened on one relay instance ends the accessory's inbox open on another (1001)")
    func inboxTakenOverElsewhere() async throws {
        let schema = try await Self.withTwoRelays { first, second, one, two in
            await first.waitUntilListening()
            await second.waitUntilListening()
            #expect(try await RelayServerTests.post(one, relayMessage(1)).status == .created)
            let (older, delivered) = try RelayServerTests.openInbox(one)
            for await _ in delivered { break }
            let frames = try await RelayServerTests.readInbox(two, count: 1) { _ in [1] }
            #expect(frames == [.deliver(seq: 1, message: relayMessage(1))])
            let close = try await older.value
            #expect(close?.closeCode == .goingAway)
            #expect(close?.reason == "a newer connection of this accessory took over, on another relay instance")
        }
        let store = try TestPostgres.store(schema: schema)
        try await store.serving { try await store.dropSchema() }
    }

    /// Two relay instances, each live on its own port, on one fresh schema where the accessory
    /// is registered, for as long as `body` runs; returns the schema.
    private static func withTwoRelays(
        _ body: @Sendable (PostgresRelayStore, PostgresRelayStore, any TestClientProtocol, any TestClientProtocol) async throws -> Void
    ) async throws -> String {
        let logger = Logger(label: "relay-pg", factory: { _ in SwiftLogNoOpLogHandler() })
        let schema = TestPostgres.freshSchema()
        let first = try TestPostgres.store(schema: schema), second = try TestPostgres.store(schema: schema)
        try await first.serving {
            try await second.serving {
                try await first.register(accessory: RelayServerTests.accessory, inbox: RelayServerTests.inbox, post: RelayServerTests.post)
                try await RelayServer(store: first, configuration: .init(port: 0), logger: logger).application().test(.live) { one in
                    try await RelayServer(store: second, configuration: .init(port: 0), logger: logger).application().test(.live) { two in
                        try await body(first, second, one, two)
                    }
                }
            }
        }
        return schema
    }

    @Test("two relay instances on one database: a post to one reaches the inbox open on the other, and survives both restarting")
    func twoRelays() async throws {
        let schema = try await Self.withTwoRelays { _, second, one, two in
            // The inbox is on the second; the posts go to the first while it is open.
            let frames = try await RelayServerTests.readInbox(two, count: 3, during: {
                await second.waitUntilListening()
                // Past the inbox's first fetch, so that only the first instance's
                // notification can wake it.
                try await Task.sleep(for: .milliseconds(300))
                for byte: UInt8 in 1...3 {
                    let status = try await RelayServerTests.post(one, relayMessage(byte)).status
                    #expect(status == .created)
                }
            }) { frames in frames.compactMap { if case .deliver(let seq, _) = $0 { seq } else { nil } }.suffix(1) }
            #expect(frames == (1...3).map { .deliver(seq: $0, message: relayMessage(UInt8($0))) })
            // Posted to the second with no inbox open: kept for later.
            #expect(try await RelayServerTests.post(two, relayMessage(4)).status == .created)
        }
        // Both instances restarted: what waits is delivered by either.
        let restarted = try TestPostgres.store(schema: schema)
        try await restarted.serving {
            let logger = Logger(label: "relay-pg", factory: { _ in SwiftLogNoOpLogHandler() })
            try await RelayServer(store: restarted, configuration: .init(port: 0), logger: logger).application().test(.live) { client in
                let frames = try await RelayServerTests.readInbox(client, count: 1) { _ in [4] }
                #expect(frames == [.deliver(seq: 4, message: relayMessage(4))])
            }
            #expect(try await restarted.queue(of: RelayServerTests.accessory) == .init(messages: 0, bytes: 0))
            try await restarted.dropSchema()
        }
    }
}
