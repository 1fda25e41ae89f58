import NotifBridgeCrypto
import NotifBridgeWire

/// One connection's whole inbound and outbound path without IO: chunks in, chunks out.
/// Both the TCP link and the BLE peripheral drive this same type.
public struct AccessoryConnection: Sendable {
    public typealias Action = AccessoryAction<Transmission>

    /// One message's chunks, to be written in order; `kind` names the message for logs.
    public struct Transmission: Sendable {
        public var chunks: [[UInt8]]
        public var kind: String
    }

    public private(set) var session: AccessorySession
    private var reassembler: ChunkReassembler
    private var framer: ChunkFramer
    /// What the transport carries (TCP's frame size, or the ATT MTU's payload on BLE).
    private var transportChunkLength: Int
    /// What the host asked for in Hello.max_chunk_length, if anything.
    private var hostChunkLength: Int?
    private let openedAt: ContinuousClock.Instant
    /// Whether a Hello has come, which ends the Hello deadline.
    private var helloReceived = false

    /// - Parameters:
    ///   - budget: partial-message bytes shared with the accessory's other links, if any.
    ///   - now: when the link opened, for the Hello deadline.
    public init(session: AccessorySession, chunkLength: Int, budget: ReassemblyBudget? = nil, now: ContinuousClock.Instant) {
        self.session = session
        self.reassembler = ChunkReassembler(limits: session.configuration.limits, budget: budget)
        self.framer = ChunkFramer(chunkLength: chunkLength)
        transportChunkLength = chunkLength
        openedAt = now
    }

    /// The length accessory → host chunks have now: the smaller of the transport's and the host's.
    public var chunkLength: Int { framer.chunkLength }

    /// A new ATT MTU (BLE): later messages use it, never above what the host asked for.
    public mutating func setTransportChunkLength(_ length: Int) {
        transportChunkLength = length
        framer.setChunkLength(min(length, hostChunkLength ?? length))
    }

    public mutating func received(chunk: some RandomAccessCollection<UInt8>, now: ContinuousClock.Instant) -> [Action] {
        let bytes: [UInt8]
        do {
            guard let complete = try reassembler.receive(chunk, now: now) else { return [] }
            bytes = complete
        } catch {
            return [.refused(error)] + map(session.receivedInvalid(error))
        }
        let message: LinkMessage
        do {
            message = try WireCodec.decode(LinkMessage.self, from: bytes)
        } catch {
            return [.refused(error)] + map(session.receivedInvalid(error))
        }
        if case .hello(let hello) = message.body {
            helloReceived = true
            if hello.maxChunkLength >= UInt32(WireLimits.minChunkLength) {
                hostChunkLength = Int(hello.maxChunkLength)
                framer.setChunkLength(min(transportChunkLength, Int(hello.maxChunkLength)))
            }
        }
        return map(session.received(message))
    }

    /// The byte stream under the chunks broke (TCP framing over a limit): answer, then close.
    public mutating func streamFailed(_ error: WireError) -> [Action] {
        [.refused(error)] + map(session.receivedInvalid(error)) + [.close(reason: error.description)]
    }

    /// The accessory could not carry out a delivery (its store failed): tell the host, which will
    /// send the event again since no receipt follows.
    public mutating func deliveryFailed(_ detail: String) -> [Action] {
        map([.send(.linkError(.unexpected, "accessory could not store the event: \(detail)"))])
    }

    /// Drops partial messages that timed out.
    public mutating func tick(now: ContinuousClock.Instant) -> [UInt8] {
        reassembler.expire(now: now)
    }

    /// Whether the host has let `WireLimits.helloTimeout` pass since the opening without a
    /// Hello. Only a Hello ends the wait: a Sealed sent first is answered with Resync and
    /// KeyOffer, and a peer that goes on that way must not hold its slot.
    public func isHelloOverdue(now: ContinuousClock.Instant) -> Bool {
        !helloReceived && now - openedAt > session.configuration.limits.helloTimeout
    }

    /// Whether a Hello has come on this link.
    public var hasReceivedHello: Bool { helloReceived }

    /// Ends the link for its missing Hello: a `LinkError` that says so, so that the peer's
    /// developer learns why, then the close.
    public mutating func helloTimedOut() -> [Action] {
        let detail = "no Hello within \(session.configuration.limits.helloTimeout)"
        return map([.send(.linkError(.unexpected, detail))]) + [.close(reason: detail)]
    }

    public mutating func delivered(_ delivery: AccessorySession.Delivery, stored: Bool, alerted: Bool) -> [Action] {
        map(session.delivered(delivery, stored: stored, alerted: alerted))
    }

    public mutating func seal(_ event: AccessoryEvent.OneOf_Event, featureID: String) -> [Action] {
        map(session.seal(event, featureID: featureID))
    }

    public mutating func disconnected() {
        reassembler.reset()
        session.disconnected()
    }

    private mutating func map(_ actions: [AccessorySession.Action]) -> [Action] {
        actions.map { action in
            action.mapSend { message in Transmission(chunks: framer.frame(WireCodec.encode(message)), kind: message.kindName) }
        }
    }
}
