import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotifBridgeHostCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// The transport extension's posts against the real relay server: what the relay answers, and
/// how each answer completes `messageReceived` for the system.
@Suite("Relay post client")
struct RelayPostClientTests {
    static func client(_ relay: String, token: String = RelayInboxClientTests.post.text) -> RelayPostClient {
        RelayPostClient(configuration: .init(relay: relay, accessoryID: RelayInboxClientTests.accessory, token: token, timeout: .seconds(5)))
    }

    @Test("taken: the relay's number; a full queue: transportFailed (try again); a wrong token or no relay: transportUnavailable")
    func completions() async throws {
        let directory = try TemporaryDirectory("relay-post-client")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite", limits: RelayLimits(maxQueuedMessages: 1))
        try store.register(accessory: RelayInboxClientTests.accessory, inbox: RelayInboxClientTests.inbox, post: RelayInboxClientTests.post)
        let quiet = Logger(label: "relay", factory: { _ in SwiftLogNoOpLogHandler() })
        let port = try await RelayServer(store: store, configuration: .init(port: 0), logger: quiet).application().test(.live) { relay in
            let port = try #require(relay.port)
            // ws:// is the accessory's form of the same address; the client posts over http://.
            let client = Self.client("ws://127.0.0.1:\(port)")
            #expect(try await client.post(Data(relayMessage(1))) == 1)
            let failures = Mutex<[RelayPostClient.Failure]>([])
            await #expect(throws: AccessoryMessageError.transportFailed) {
                try await client.send(Data(relayMessage(2))) { error in failures.withLock { $0.append(error) } }
            }
            await #expect(throws: AccessoryMessageError.transportUnavailable) {
                try await Self.client("http://127.0.0.1:\(port)", token: RelayInboxClientTests.inbox.text).send(Data(relayMessage(3))) { error in failures.withLock { $0.append(error) } }
            }
            let seen = failures.withLock { $0 }.map { failure -> String in
                switch failure {
                case .busy(let status, _), .refused(let status, _): "\(status)"
                case .unreachable: "unreachable"
                }
            }
            #expect(seen == ["429", "401"])
            return port
        }
        try store.close()
        // Nobody listens there any more.
        await #expect(throws: AccessoryMessageError.transportUnavailable) { try await Self.client("http://127.0.0.1:\(port)").send(Data(relayMessage(4))) }
    }
}
