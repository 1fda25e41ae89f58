import Foundation
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTCP
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

/// A peer that chatters without ever completing what the phone waits for cannot hold the phone
/// past its timeout: the timeout bounds the whole wait, not the gap between two messages.
@Suite("The phone's waits end at their timeout, whatever the peer sends meanwhile", .timeLimit(.minutes(1)))
struct HostClientWaitTests {
    static let session = HostSession(configuration: .init(identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))

    /// Plays a hostile accessory on `link`: a Resync every `interval`, which needs no keys and
    /// which the phone reports as an event, until the link closes.
    static func chatter(on link: ChunkLink, every interval: Duration) async {
        var framer = ChunkFramer(chunkLength: link.chunkLength)
        var resync = LinkMessage()
        resync.resync = Notifbridge_V1_Resync()
        let bytes = WireCodec.encode(resync)
        while !Task.isCancelled {
            guard (try? await link.write(framer.frame(bytes))) != nil else { return }
            try? await Task.sleep(for: interval)
        }
    }

    /// Runs `wait` on a phone whose peer chatters every 100 ms, and returns how long it took to
    /// throw; fails if it returned, or had not thrown after 30 s. (Without the budget it never
    /// throws; how soon it does is not asserted, since a busy test run delays every task.)
    static func timeToGiveUp(_ wait: @escaping @Sendable (HostClient) async throws -> Void) async throws -> Duration {
        let pair = ChunkLink.pair(kind: .loopback)
        let peer = Task { await chatter(on: pair.accessory, every: .milliseconds(100)) }
        defer { peer.cancel() }
        let start = ContinuousClock.now
        let outcome: Result<Void, any Error> = try await withThrowingTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                do {
                    _ = try await HostClient.run(over: pair.phone, session: session) { try await wait($0) }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        } ?? .success(())
        let elapsed = ContinuousClock.now - start
        guard case .failure(let error) = outcome else {
            Issue.record("the wait did not give up within 30 s (or returned): \(elapsed)")
            return elapsed
        }
        #expect("\(error)".contains("timed out") || "\(error)".contains("nothing answered"), "\(error)")
        return elapsed
    }

    @Test("Waiting for the key exchange: a Resync every 100 ms, a timeout of 1 s")
    func exchange() async throws {
        _ = try await Self.timeToGiveUp { try await $0.waitUntilEstablished(timeout: .seconds(1)) }
    }

    @Test("Waiting for receipts: a Resync every 100 ms, a timeout of 1 s")
    func receipts() async throws {
        _ = try await Self.timeToGiveUp { client in
            let sequence = try client.send(.add(HostNotification(source: "com.apple.MobileSMS", id: "n1", sourceName: "Messages", title: "Anna", body: "hi"), .standard))
            _ = try await client.waitForReceipts([sequence], timeout: .seconds(1))
        }
    }
}
