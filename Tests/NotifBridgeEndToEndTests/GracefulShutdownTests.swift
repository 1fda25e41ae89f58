import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

@Suite("Graceful shutdown")
struct GracefulShutdownTests {
    /// The accessory's end of an in-memory link that counts how often its reader asked for the
    /// next chunk: after N chunks, the (N + 1)th request means all N are in the connection's queue.
    final class CountingLink: @unchecked Sendable {
        private(set) var link: ChunkLink!
        private let requests = Mutex(0)
        /// Pulled by the link's one reader, one call at a time.
        private var iterator: AsyncThrowingStream<LinkInbound, any Error>.AsyncIterator

        init(_ underlying: ChunkLink) {
            iterator = underlying.inbound.makeAsyncIterator()
            link = ChunkLink(
                peer: underlying.peer, kind: underlying.kind, chunkLength: underlying.chunkLength,
                inbound: AsyncThrowingStream { [unowned self] in try await self.next() },
                write: underlying.write, close: underlying.close
            )
        }

        private func next() async throws -> LinkInbound? {
            requests.withLock { $0 += 1 }
            return try await iterator.next()
        }

        /// Waits (``TestWait``) until the reader has asked for more than `count` chunks.
        func waitUntilRead(_ count: Int) async throws {
            try await TestWait.until("the accessory to read more than \(count) chunks") { requests.withLock { $0 } > count }
        }
    }

    /// Shutdown arrives while the connection holds read, uncommitted events (a long commit
    /// window): they are stored and acknowledged, the link closes, and `run` returns normally.
    @Test("SIGTERM's shutdown commits and acknowledges the batch in hand, then run returns")
    func batchInHand() async throws {
        let directory = try TemporaryDirectory("shutdown")
        defer { directory.remove() }
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, commitWindow: AccessoryConfiguration.maxCommitWindow),
            policy: .unlimitedBursts,
            presenter: RecordingPresenter(),
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (accessoryEnd, phoneEnd) = ChunkLink.pair(kind: .loopback)
        let counting = CountingLink(accessoryEnd)
        let (links, handOver) = AsyncStream.makeStream(of: ChunkLink.self)
        handOver.yield(counting.link)
        let running = Task { try await daemon.run(StreamLinkSource(links, announcing: .connected(peer: "test"))) }

        let (receipts, _) = try await HostClient.run(over: phoneEnd, session: TestHost.session()) { connection in
            // Generous: the suite starts with every other test, on two cores.
            try await connection.waitUntilEstablished(timeout: .seconds(60))
            // Hello and KeyMaterial were two chunks; each event is one more.
            var sequences: Set<UInt64> = []
            for index in 1...12 { sequences.insert(try connection.send(.add(TestHost.note("s\(index)"), .standard))) }
            try await counting.waitUntilRead(2 + 12)
            daemon.shutdown()
            return try await connection.waitForReceipts(sequences)
        }
        try await running.value
        #expect(receipts.count == 12 && receipts.values.allSatisfy(\.stored))
        #expect(try daemon.store.notifications().count == 12)
        handOver.finish()
    }
}
