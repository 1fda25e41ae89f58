import Foundation
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Synchronization
import Testing

/// An accessory that reads nothing and keeps offering keys (two, in turn, so that no offer is
/// a repeat the phone ignores) would have the phone queue a KeyMaterial for each, for as long
/// as it sends. The queue of answers is bounded; past it the phone closes the link.
@Suite("The phone's unread answers are bounded", .timeLimit(.minutes(1)))
struct UnreadAnswersTests {
    static func offer(_ key: AccessoryPrivateKey) -> [UInt8] {
        var message = LinkMessage()
        message.keyOffer = .with {
            $0.cipherSuite = key.suite.rawValue
            $0.version = CipherSuite.versionName
            $0.publicKey = key.publicKeyRepresentation
            $0.keyID = Data(key.keyID)
        }
        return WireCodec.encode(message)
    }

    @Test("Offers answered up to the limit wait; one more closes the link", arguments: [HostClient.maxUnwrittenAnswers, HostClient.maxUnwrittenAnswers + 1])
    func offersUnread(count: Int) async throws {
        let offers = try [AccessoryPrivateKey.generate(.xWing), AccessoryPrivateKey.generate(.xWing)].map(Self.offer)
        let (inbound, feed) = AsyncThrowingStream.makeStream(of: LinkInbound.self, throwing: (any Error).self)
        let closed = Mutex(false)
        // Its first write (the phone's Hello) never completes, as on a socket nobody reads.
        let link = ChunkLink(
            peer: "an accessory that never reads", kind: .loopback, chunkLength: 4096, inbound: inbound,
            write: { _ in try await Task.sleep(for: .seconds(3600)) },
            close: {
                closed.withLock { $0 = true }
                feed.finish()
            }
        )
        var framer = ChunkFramer(chunkLength: link.chunkLength)
        for index in 0..<count {
            for chunk in framer.frame(offers[index % 2]) { feed.yield(.chunk(chunk)) }
        }
        let session = HostSession(configuration: .init(identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
        // Whether the phone had closed the link when its wait gave up: after the run, its own
        // close on the way out would make any answer true.
        let closedWhenWaitEnded = Mutex<Bool?>(nil)
        let outcome: Result<Void, any Error> = await {
            do {
                _ = try await HostClient.run(over: link, session: session) { phone in
                    do {
                        try await phone.waitUntilEstablished(timeout: .seconds(2))
                    } catch {
                        // The close follows the event that ended the wait; a moment for it.
                        for _ in 0..<50 where !closed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
                        closedWhenWaitEnded.withLock { $0 = closed.withLock { $0 } }
                        throw error
                    }
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }()
        guard case .failure(let error) = outcome else {
            Issue.record("established with an accessory that never confirmed")
            return
        }
        if count > HostClient.maxUnwrittenAnswers {
            #expect("\(error)".contains("answers unread"), "\(error)")
            #expect(closedWhenWaitEnded.withLock { $0 } == true, "the phone closed the link itself")
        } else {
            #expect("\(error)".contains("timed out"), "\(error)")
            #expect(closedWhenWaitEnded.withLock { $0 } == false, "within the limit the link stays open")
        }
    }
}

/// An accessory may send LinkErrors, responses and removals of its own accord, as often as it
/// likes; a phone whose caller reads none of them (it sends, then sleeps) kept every one.
@Suite("The phone's unread events are bounded", .timeLimit(.minutes(1)))
struct UnreadEventsTests {
    @Test("Messages of the accessory's own up to the limit wait unread; one more closes the link", arguments: [HostClient.maxUnreadEvents, HostClient.maxUnreadEvents + 1])
    func linkErrorsUnread(count: Int) async throws {
        let (inbound, feed) = AsyncThrowingStream.makeStream(of: LinkInbound.self, throwing: (any Error).self)
        let closed = Mutex(false)
        let link = ChunkLink(
            peer: "an accessory that talks", kind: .loopback, chunkLength: 4096, inbound: inbound,
            write: { _ in },
            close: {
                closed.withLock { $0 = true }
                feed.finish()
            }
        )
        var framer = ChunkFramer(chunkLength: link.chunkLength)
        let error = WireCodec.encode(LinkMessage.linkError(.unexpected, "again"))
        for _ in 0..<count {
            for chunk in framer.frame(error) { feed.yield(.chunk(chunk)) }
        }
        let seen = Mutex(0)
        let session = HostSession(configuration: .init(identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
        let (closedWhileRunning, _) = try await HostClient.run(over: link, session: session, onEvent: { event in
            if case .peerError = event { seen.withLock { $0 += 1 } }
        }) { _ in
            // Reads no event: waits until the phone has taken every message, then a moment more.
            try await TestWait.until("the phone to take \(count) messages") { seen.withLock { $0 } == count }
            try await Task.sleep(for: .milliseconds(200))
            return closed.withLock { $0 }
        }
        #expect(closedWhileRunning == (count > HostClient.maxUnreadEvents))
    }
}
