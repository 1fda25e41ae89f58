import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
@testable import NotifBridgeAccessory
import NotifBridgeLogGate
import NotifBridgeTCP
import NotifBridgeWire
import Synchronization
import Testing

/// A TCP connection's waits (the commit window, the tick) run on its socket's event loop.
@Suite("A connection's waits")
struct ConnectionTimerTests {
    @Test("With the connection's loop set, a wait is that loop's timer: it ends when the loop's clock has moved an hour, not the wall clock's", .timeLimit(.minutes(1)))
    func waitsOnTheConnectionsLoop() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let finished = Mutex(false)
        let waiting = Task {
            try await ConnectionTimer.$eventLoop.withValue(loop) {
                try await ConnectionTimer.sleep(for: .seconds(3600))
            }
            finished.withLock { $0 = true }
        }
        // The task schedules its timer when it gets to run; each turn moves the loop's clock on
        // an hour, which ends a wait scheduled before it.
        for _ in 0..<2_000 where !finished.withLock({ $0 }) {
            await loop.advanceTime(by: .seconds(3600))
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(finished.withLock { $0 })
        waiting.cancel()
        _ = try? await waiting.value
        await loop.shutdownGracefully()
    }

    @Test("A wait lasts at least its duration, and a task that prefers the loop goes on on the loop's thread")
    func waitsTheWholeDurationAndResumesOnTheLoop() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let clock = ContinuousClock()
        let (elapsed, onLoop) = try await Task(executorPreference: EventLoopTaskExecutor(eventLoop)) {
            let start = clock.now
            try await ConnectionTimer.sleep(for: .milliseconds(30), on: eventLoop)
            return (clock.now - start, eventLoop.inEventLoop)
        }.value
        #expect(elapsed >= .milliseconds(30))
        #expect(onLoop)
    }

    @Test("Cancelling the task ends its wait on the loop with CancellationError", .timeLimit(.minutes(1)))
    func cancellationEndsTheWait() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let waiting = Task { try await ConnectionTimer.sleep(for: .seconds(3600), on: eventLoop) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test("Without a loop, a wait is Task.sleep, which a cancelled task also leaves at once", .timeLimit(.minutes(1)))
    func withoutALoop() async throws {
        #expect(ConnectionTimer.eventLoop == nil)
        let waiting = Task { try await ConnectionTimer.sleep(for: .seconds(3600)) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test("The TCP listener serves each link with its socket's loop set for the waits, on that loop", .timeLimit(.minutes(1)))
    func tcpLinksWaitOnTheirSocketsLoop() async throws {
        let port = AsyncStream.makeStream(of: Int.self)
        let served = AsyncStream.makeStream(of: (hasLoop: Bool, onLoop: Bool).self)
        let source = TCPLinkSource(
            host: "127.0.0.1", port: 0, limits: .default, maxConnections: 4, suite: "p256", keyID: { "" },
            gate: LogGate(LogThrottle()), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            onListening: { port.continuation.yield($0) }, open: OpenConnections()
        )
        let running = Task {
            try await source.run(ready: { _ in }) { _ in
                let loop = ConnectionTimer.eventLoop
                served.continuation.yield((loop != nil, loop?.inEventLoop ?? false))
            }
        }
        defer { running.cancel() }
        var ports = port.stream.makeAsyncIterator()
        let bound = try #require(await ports.next())
        let client = try await TCPLink.connect(host: "127.0.0.1", port: bound, limits: .default)
        var links = served.stream.makeAsyncIterator()
        let link = try #require(await links.next())
        #expect(link.hasLoop)
        #expect(link.onLoop)
        try? await client.channel.close()
        running.cancel()
        _ = try? await running.value
    }
}
