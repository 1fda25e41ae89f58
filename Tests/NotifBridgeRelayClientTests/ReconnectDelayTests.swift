@testable import NotifBridgeRelayClient
import Testing

/// The inbox's waits between attempts.
@Suite("Inbox reconnect delays")
struct ReconnectDelayTests {
    @Test("each wait is between half the delay and the whole of it", arguments: [
        (0.0, Duration.seconds(30)), (0.5, .seconds(45)), (0.999, .milliseconds(59_970)), (1.0, .seconds(60)), (-1.0, .seconds(30)), (2.0, .seconds(60)),
    ])
    func jittered(fraction: Double, wait: Duration) {
        #expect(RelayInboxClient.jittered(.seconds(60), fraction) == wait)
    }
}
