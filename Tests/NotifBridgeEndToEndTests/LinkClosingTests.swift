import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// A link a transport opened (a Bluetooth central) is ended from the accessory's side when the
/// daemon stops serving it. BlueZ keeps a central connected until told otherwise, and while one
/// central holds the link every other one is refused: a link the daemon gave up on but never
/// closed would keep the iPhone out for as long as the stranger stayed in range.
@Suite("Links the daemon ends are closed", .timeLimit(.minutes(1)))
struct LinkClosingTests {
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        /// What the peer writes after connecting (nothing: it waits for the Hello timeout).
        var writes: [[UInt8]]
        /// The peer reads nothing: the accessory's writes block, as on a full socket, until
        /// the link is closed. The connection's loop, blocked there, cannot judge the Hello
        /// deadline; its tick task must.
        var readsNothing = false
    }

    static func hello(version: UInt32) -> [UInt8] {
        var message = LinkMessage()
        message.hello = Notifbridge_V1_Hello()
        message.hello.protocolVersion = version
        message.hello.cipherSuites = ["XWing"]
        message.hello.maxChunkLength = 4096
        var framer = ChunkFramer(chunkLength: 4096)
        return framer.frame(WireCodec.encode(message))[0]
    }

    static let cases: [Case] = [
        Case(description: "no Hello within the Hello timeout", writes: []),
        Case(description: "a Hello of protocol version 2", writes: [hello(version: 2)]),
        Case(description: "one byte that is no chunk", writes: [[0x01]]),
        Case(description: "a Sealed and no Hello, reading nothing", writes: [HostilePeerTests.sealed], readsNothing: true),
    ]

    @Test(arguments: cases)
    func closedWhenServingEnds(_ c: Case) async throws {
        let directory = try TemporaryDirectory("closing")
        defer { directory.remove() }
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, limits: WireLimits(helloTimeout: .milliseconds(300))),
            presenter: RecordingPresenter(),
            logger: Logger(label: "test.accessory", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (accessoryEnd, phoneEnd) = ChunkLink.pair(kind: .bluetooth, chunkLength: 244)
        // Like a central's link: closing it is the only way the central is disconnected.
        let closed = Mutex(false)
        var link = accessoryEnd
        link.close = { closed.withLock { $0 = true } }
        if c.readsNothing {
            link.write = { _ in
                while !closed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
                throw CancellationError()
            }
        }
        let (links, handOver) = AsyncStream.makeStream(of: ChunkLink.self)
        handOver.yield(link)
        let running = Task { try await daemon.run(StreamLinkSource(links, announcing: .connected(peer: "test"))) }
        defer {
            running.cancel()
            handOver.finish()
        }
        for chunk in c.writes { try await phoneEnd.write([chunk]) }
        try await TestWait.until("the accessory to close the link after \(c)") { closed.withLock { $0 } }
    }
}
