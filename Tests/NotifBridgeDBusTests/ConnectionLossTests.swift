import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing

/// A connection whose bus daemon goes away says so once, to every watcher, and a close asked
/// for is no loss: the daemon's Bluetooth parts stop on the first and not on the second.
@Suite(
    "Losing a D-Bus connection",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .timeLimit(.minutes(1))
)
struct ConnectionLossTests {
    /// Collects what the loss handlers hear, and lets a test wait for the first.
    final class Heard: Sendable {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let count = Mutex(0)

        func handler(_ tag: String) -> DBusLossHandler {
            { [self] error in
                count.withLock { $0 += 1 }
                continuation.yield("\(tag): \(error)")
            }
        }
    }

    @Test("the bus daemon's exit reaches each handler once, and one added afterwards at once")
    func busDaemonExits() async throws {
        let daemon = try PrivateBusDaemon()
        let connection = try await DBusConnection.connect(to: daemon.address)
        let heard = Heard()
        connection.onLoss(heard.handler("first"))
        connection.onLoss(heard.handler("second"))
        daemon.stop()
        var told = heard.stream.makeAsyncIterator()
        let first = try #require(await told.next())
        let second = try #require(await told.next())
        #expect(Set([first, second].map { $0.prefix(while: { $0 != ":" }) }) == ["first", "second"])
        #expect(connection.isClosed)
        connection.onLoss(heard.handler("late"))
        #expect(try #require(await told.next()).hasPrefix("late"))
        #expect(heard.count.withLock { $0 } == 3)
        connection.close()
    }

    @Test("close() is no loss, before the daemon goes or after")
    func closeIsNoLoss() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let connection = try await DBusConnection.connect(to: daemon.address)
        let heard = Heard()
        connection.onLoss(heard.handler("closed"))
        connection.close()
        daemon.stop()
        // Time for the bus thread to tear down: a loss is told within milliseconds of it.
        try await Task.sleep(for: .milliseconds(500))
        connection.onLoss(heard.handler("after"))
        #expect(heard.count.withLock { $0 } == 0)
    }
}
