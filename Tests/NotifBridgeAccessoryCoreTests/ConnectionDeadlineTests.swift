import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire
import Testing

/// The wait for a Hello, which a link may not make too long. Time is an input here, so the
/// boundary is checked at the limit and just past it.
@Suite("Accessory connection deadline")
struct ConnectionDeadlineTests {
    static let helloTimeout = Duration.seconds(10)
    static let tick = Duration.nanoseconds(1)

    static func opened(at start: ContinuousClock.Instant) throws -> AccessoryConnection {
        let configuration = AccessorySession.Configuration(allowsP256: true, transports: [.bluetooth], limits: WireLimits(helloTimeout: helloTimeout))
        return AccessoryConnection(
            session: AccessorySession(identity: try AccessoryPrivateKey.generate(.xWing), exchange: nil, configuration: configuration),
            chunkLength: 4096, now: start)
    }

    /// `message` as one chunk, received at `now`; what the accessory answered.
    static func receive(_ message: LinkMessage, by connection: inout AccessoryConnection, at now: ContinuousClock.Instant) -> [AccessoryConnection.Action] {
        var framer = ChunkFramer(chunkLength: 4096)
        return framer.frame(WireCodec.encode(message)).flatMap { connection.received(chunk: $0, now: now) }
    }

    static var hello: LinkMessage {
        var message = LinkMessage()
        message.hello = .with {
            $0.protocolVersion = notifBridgeProtocolVersion
            $0.cipherSuites = ["XWing"]
        }
        return message
    }

    @Test("No Hello: overdue just past the limit, not at it")
    func silent() throws {
        let start = ContinuousClock.now
        let connection = try Self.opened(at: start)
        #expect(!connection.isHelloOverdue(now: start + Self.helloTimeout))
        #expect(connection.isHelloOverdue(now: start + Self.helloTimeout + Self.tick))
    }

    @Test("A Hello in time ends the wait")
    func helloInTime() throws {
        let start = ContinuousClock.now
        var connection = try Self.opened(at: start)
        _ = Self.receive(Self.hello, by: &connection, at: start + Self.helloTimeout)
        #expect(!connection.isHelloOverdue(now: start + .seconds(86_400)))
    }

    /// A Sealed before any Hello is answered with Resync and KeyOffer. That once ended the wait
    /// too, and such a peer held its connection slot (on Bluetooth, the one central) for ever.
    @Test("A Sealed before any Hello does not end the wait")
    func sealedFirst() throws {
        let start = ContinuousClock.now
        var connection = try Self.opened(at: start)
        var sealed = LinkMessage()
        sealed.sealed = .with {
            $0.featureRef = 1
            $0.ciphertext = Data(repeating: 0xAB, count: 40)
        }
        let answers = Self.receive(sealed, by: &connection, at: start)
        #expect(answers.contains { if case .send(let transmission) = $0 { transmission.kind == "KeyOffer" } else { false } })
        #expect(!connection.isHelloOverdue(now: start + Self.helloTimeout))
        #expect(connection.isHelloOverdue(now: start + Self.helloTimeout + Self.tick))
    }

    @Test("A missed Hello is answered with a LinkError that says so, then the close")
    func answer() throws {
        var connection = try Self.opened(at: .now)
        let actions = connection.helloTimedOut()
        guard actions.count == 2, case .send(let transmission) = actions[0], case .close(let reason) = actions[1] else {
            Issue.record("expected a send and a close, got \(actions)")
            return
        }
        var reassembler = ChunkReassembler(limits: .default)
        let bytes = try #require(try transmission.chunks.compactMap { try reassembler.receive($0, now: .now) }.first)
        let message = try WireCodec.decode(LinkMessage.self, from: bytes)
        #expect(message.error.code == .unexpected)
        #expect(message.error.detail == "no Hello within 10.0 seconds")
        #expect(reason == message.error.detail)
    }
}
