import Foundation
import NotifBridgeWire

/// The iPhone's whole path over one link without IO: chunks in, chunks out, the mirror of the
/// accessory's `AccessoryConnection`. It reassembles and decodes what arrives, hands messages to
/// `HostSession`, and frames what the session sends at the link's chunk length. The simulated
/// iPhone's connection (TCP or a BLE central) drives it; so could the iOS transport extension.
public struct HostConnection: Sendable {
    /// What the driver does: write chunks, or carry out one of the session's other actions.
    public enum Action: Sendable {
        /// Write these chunks, in order. `sequence` is set for a sealed event, whose transport
        /// completion the system waits for.
        case write([[UInt8]], sequence: UInt64?)
        /// Any session action but sending (those become `write`).
        case session(HostSession.Action)
    }

    public var session: HostSession
    private var framer: ChunkFramer
    private var reassembler: ChunkReassembler

    public init(session: HostSession, limits: WireLimits = .default, chunkLength: Int) {
        self.session = session
        framer = ChunkFramer(chunkLength: chunkLength)
        reassembler = ChunkReassembler(limits: limits)
    }

    /// The length phone → accessory chunks have now.
    public var chunkLength: Int { framer.chunkLength }

    /// A new ATT MTU (BLE): later messages use it.
    public mutating func setTransportChunkLength(_ length: Int) {
        framer.setChunkLength(length)
    }

    /// One chunk from the accessory. Throws what does not reassemble or decode.
    public mutating func received(chunk: some RandomAccessCollection<UInt8>, now: ContinuousClock.Instant) throws(WireError) -> [Action] {
        guard let bytes = try reassembler.receive(chunk, now: now) else { return [] }
        let message = try WireCodec.decode(LinkMessage.self, from: bytes)
        return frame(session.received(message))
    }

    /// Runs one session call (send, connected, transport completion, ...) and frames what it sends.
    public mutating func step(_ body: (inout HostSession) -> [HostSession.Action]) -> [Action] {
        frame(body(&session))
    }

    /// The chunks of `message` at the current chunk length, or at `chunkLength` for this message only.
    public mutating func chunks(of message: LinkMessage, chunkLength: Int? = nil) -> [[UInt8]] {
        guard let chunkLength else { return framer.frame(WireCodec.encode(message)) }
        let current = framer.chunkLength
        framer.setChunkLength(chunkLength)
        defer { framer.setChunkLength(current) }
        return framer.frame(WireCodec.encode(message))
    }

    private mutating func frame(_ actions: [HostSession.Action]) -> [Action] {
        actions.map { action in
            switch action {
            case .send(let message): .write(chunks(of: message), sequence: nil)
            case .transmit(let message, let sequence): .write(chunks(of: message), sequence: sequence)
            default: .session(action)
            }
        }
    }
}
