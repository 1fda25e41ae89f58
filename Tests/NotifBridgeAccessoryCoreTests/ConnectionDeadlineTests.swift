import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// The two waits a link may not make too long: for a Hello, and for an established exchange.
/// Time is an input here, so each boundary is checked at the limit and just past it.
@Suite("Accessory connection deadlines")
struct ConnectionDeadlineTests {
    static let helloTimeout = Duration.seconds(10)
    static let keyExchangeTimeout = Duration.seconds(30)
    static let tick = Duration.nanoseconds(1)

    /// An accessory connection opened at `start`, and a phone for it.
    struct Pair {
        var accessory: AccessoryConnection
        var phone: HostConnection
        let start = ContinuousClock.now

        init() throws {
            let configuration = AccessorySession.Configuration(
                allowsP256: true, transports: [.bluetooth], limits: WireLimits(helloTimeout: ConnectionDeadlineTests.helloTimeout),
                keyExchangeTimeout: ConnectionDeadlineTests.keyExchangeTimeout)
            accessory = AccessoryConnection(
                session: AccessorySession(identity: try AccessoryPrivateKey.generate(.xWing), exchange: nil, configuration: configuration),
                chunkLength: 4096, now: start)
            phone = HostConnection(
                session: HostSession(configuration: .init(suites: [.xWing], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID)),
                chunkLength: 4096)
        }

        /// Hands `writes` to the accessory at `now`, and what it answers to the phone, until
        /// neither has more to say; what the accessory did is returned.
        @discardableResult
        mutating func exchange(_ writes: [HostConnection.Action], at now: ContinuousClock.Instant) throws -> [AccessoryConnection.Action] {
            var toAccessory = writes
            var done: [AccessoryConnection.Action] = []
            for _ in 0..<20 where !toAccessory.isEmpty {
                var toPhone: [[UInt8]] = []
                for case .write(let chunks, _) in toAccessory {
                    for chunk in chunks {
                        let actions = accessory.received(chunk: chunk, now: now)
                        done += actions
                        for case .send(let transmission) in actions { toPhone += transmission.chunks }
                    }
                }
                toAccessory = []
                for chunk in toPhone { toAccessory += try phone.received(chunk: chunk, now: now) }
            }
            return done
        }

        /// The phone's Hello and the key exchange it starts, all at `now`.
        mutating func connect(at now: ContinuousClock.Instant) throws {
            try exchange(phone.step { $0.connected(maxChunkLength: 4096) }, at: now)
        }

        /// A message that is no Hello, framed as one chunk, as a stranger might send it first.
        mutating func send(_ message: LinkMessage, at now: ContinuousClock.Instant) -> [AccessoryConnection.Action] {
            var framer = ChunkFramer(chunkLength: 4096)
            return framer.frame(WireCodec.encode(message)).flatMap { accessory.received(chunk: $0, now: now) }
        }
    }

    @Test("No Hello: the Hello deadline is missed just past its limit, not at it")
    func hello() throws {
        let pair = try Pair()
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.helloTimeout) == nil)
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.helloTimeout + Self.tick) == .hello(Self.helloTimeout))
    }

    /// A Hello and then silence: the accessory has offered its key and waits for KeyMaterial.
    @Test("A Hello and no KeyMaterial: the key-exchange deadline, counted from the opening")
    func helloThenSilence() throws {
        var pair = try Pair()
        var hello = LinkMessage()
        hello.hello = .with {
            $0.protocolVersion = notifBridgeProtocolVersion
            $0.cipherSuites = ["XWing"]
        }
        _ = pair.send(hello, at: pair.start + .seconds(1))
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.helloTimeout + Self.tick) == nil, "the Hello came in time")
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.keyExchangeTimeout) == nil)
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.keyExchangeTimeout + Self.tick) == .keyExchange(Self.keyExchangeTimeout))
    }

    /// A Sealed before any Hello is answered with Resync and KeyOffer, which ends the wait for
    /// a Hello; it used to end every deadline, so such a peer held its slot for ever.
    @Test("A Sealed before any Hello does not escape the deadlines")
    func sealedFirst() throws {
        var pair = try Pair()
        var sealed = LinkMessage()
        sealed.sealed = .with {
            $0.featureRef = 1
            $0.ciphertext = Data(repeating: 0xAB, count: 40)
        }
        let answers = pair.send(sealed, at: pair.start)
        #expect(answers.contains { if case .send(let transmission) = $0 { transmission.kind == "KeyOffer" } else { false } })
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.keyExchangeTimeout) == nil)
        #expect(pair.accessory.missedDeadline(now: pair.start + Self.keyExchangeTimeout + Self.tick) == .keyExchange(Self.keyExchangeTimeout))
    }

    @Test("An established link has no deadline, however long it stays")
    func established() throws {
        var pair = try Pair()
        try pair.connect(at: pair.start + .seconds(29))
        #expect(pair.accessory.session.isEstablished)
        #expect(pair.accessory.missedDeadline(now: pair.start + .seconds(86_400)) == nil)
    }

    /// A decrypt failure drops the exchange and offers a fresh key: the peer then has the
    /// whole timeout again to complete a new exchange, counted from the failure.
    @Test("After a decrypt failure the key-exchange deadline counts from the failure")
    func afterDecryptFailure() throws {
        var pair = try Pair()
        try pair.connect(at: pair.start)
        let failedAt = pair.start + .seconds(100)
        var forged = LinkMessage()
        forged.sealed = .with {
            $0.featureRef = 0
            $0.featureID = "com.example.feature"
            $0.ciphertext = Data(repeating: 0xAB, count: 40)
        }
        _ = pair.send(forged, at: failedAt)
        #expect(!pair.accessory.session.isEstablished, "the forged Sealed dropped the exchange")
        #expect(pair.accessory.missedDeadline(now: failedAt + Self.keyExchangeTimeout) == nil)
        #expect(pair.accessory.missedDeadline(now: failedAt + Self.keyExchangeTimeout + Self.tick) == .keyExchange(Self.keyExchangeTimeout))
    }

    @Test("A missed deadline is answered with a LinkError that names it, then the close", arguments: [
        AccessoryConnection.Deadline.hello(.seconds(10)), .keyExchange(.seconds(30)),
    ])
    func answer(deadline: AccessoryConnection.Deadline) throws {
        var pair = try Pair()
        let actions = pair.accessory.timedOut(deadline)
        guard actions.count == 2, case .send(let transmission) = actions[0], case .close(let reason) = actions[1] else {
            Issue.record("expected a send and a close, got \(actions)")
            return
        }
        var reassembler = ChunkReassembler(limits: .default)
        let bytes = try #require(try transmission.chunks.compactMap { try reassembler.receive($0, now: .now) }.first)
        let message = try WireCodec.decode(LinkMessage.self, from: bytes)
        #expect(message.error.code == .unexpected)
        #expect(message.error.detail == deadline.description)
        #expect(reason == deadline.description)
    }
}
