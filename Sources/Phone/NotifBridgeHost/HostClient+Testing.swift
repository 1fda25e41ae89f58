import Foundation
import NotifBridgeHostCore
import NotifBridgeWire
import Synchronization

/// Calls no iPhone makes, for tests that play a misbehaving one: tampered messages, raw chunks,
/// and events sealed for inspection. SPI, so they stay out of the public API; a test imports
/// them with `@_spi(Testing) import NotifBridgeHost`.
@_spi(Testing)
extension HostClient {
    /// Sends a link message as is, bypassing the session (tests use it to tamper).
    public func sendRaw(_ message: LinkMessage) {
        let chunks = state.withLock { $0.chunks(of: message) }
        outbound.yield(Outbound(chunks: chunks))
    }

    /// Sends raw chunk bytes (tests use it for framing abuse).
    public func sendRawChunks(_ chunks: [[UInt8]]) {
        outbound.yield(Outbound(chunks: chunks))
    }

    /// Seals an event the way the system would, without sending it.
    public func sealForInspection(_ operation: HostOperation, sequence: UInt64, now: Date = Date()) throws -> LinkMessage? {
        let event = try DataProvider.event(for: operation, now: now)
        return state.withLock { $0.session.seal(event, sequence: sequence) }
    }
}
