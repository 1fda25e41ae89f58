import Foundation
import NotifBridgeHostCore
import NotifBridgeWire
import Synchronization

/// Link faults a scenario can stage: a message cut off by a disconnect, and messages put on
/// the link out of order. Both go through the session like any other call, so the system's
/// bookkeeping (numbers, what awaits a receipt) stays exactly as for a real fault.
extension HostClient {
    /// Chunk length for a message cut short, so that even a small one spans several chunks.
    static let partialChunkLength = 64

    /// Numbers and seals `operation`, then writes only its first chunk: call it just before the
    /// link drops. The event stays unacknowledged and goes again on the next link.
    @discardableResult
    public func sendFirstChunkOnly(_ operation: HostOperation, now: Date = Date()) throws -> UInt64 {
        let (sequence, actions) = try state.withLock { state throws -> (UInt64, [HostSession.Action]) in
            let sent = try state.session.send(operation, now: now)
            var rest: [HostSession.Action] = []
            for action in sent.actions {
                guard case .transmit(let message, _) = action else {
                    rest.append(action)
                    continue
                }
                let chunks = state.chunks(of: message, chunkLength: Self.partialChunkLength)
                outbound.yield(Outbound(chunks: Array(chunks.prefix(1))))
            }
            return (sent.sequence, rest)
        }
        perform(actions)
        return sequence
    }

    /// Numbers the calls in the order given and puts them on the link in reverse order, as a
    /// transport that reorders would deliver them.
    @discardableResult
    public func sendReversed(_ operations: [HostOperation], now: Date = Date()) throws -> [UInt64] {
        var sequences: [UInt64] = []
        var failure: (any Error)?
        let actions = step { session in
            var transmits: [HostSession.Action] = []
            var others: [HostSession.Action] = []
            do {
                for operation in operations {
                    let sent = try session.send(operation, now: now)
                    sequences.append(sent.sequence)
                    for action in sent.actions {
                        if case .transmit = action { transmits.append(action) } else { others.append(action) }
                    }
                }
            } catch {
                failure = error
            }
            return transmits.reversed() + others
        }
        perform(actions)
        if let failure { throw HostFailure(description: "reordered calls not sent: \(failure)") }
        return sequences
    }

    /// Sequence numbers the accessory has not acknowledged yet, from this link or earlier ones.
    public var unacknowledged: Set<UInt64> {
        state.withLock { Set($0.session.forwarder.unacknowledged.map(\.sequence)) }
    }
}
