/// Waiting in a test for something that should happen soon (a notification shown, a link
/// closed, a queue drained).
///
/// `swift test` starts every test at once, and on a 2-core machine the store's commits block
/// the threads of the shared pool while they fsync: in a whole run beside a busy disk, a test
/// that takes milliseconds alone waited 20 s for a thread, and a 10 s wait for an ANCS
/// notification failed in CI (2026-11-27). A wait ends as soon as its condition holds, so
/// only a failing test pays the whole deadline; it stays under the suites' one-minute limit so
/// that the failure names what was awaited.
public enum TestWait {
    public static let deadline = Duration.seconds(45)

    /// Polls `condition` every 20 ms, sleeping in between (no thread is held), until it holds;
    /// throws ``TimedOut`` naming `what` once ``deadline`` has passed.
    public static func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        let end = ContinuousClock.now + deadline
        while try await !condition() {
            guard ContinuousClock.now < end else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public let what: String
        public var description: String { "timed out waiting for \(what)" }
    }
}
