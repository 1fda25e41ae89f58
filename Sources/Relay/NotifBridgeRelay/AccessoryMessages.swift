import HummingbirdWebSocket
import NIOCore
import NotifBridgeRelayCore

/// Gathers the accessory's WebSocket frames into messages, and refuses what §11.5 refuses
/// before it is buffered, so that the inbox closes with 1008 and a reason. swift-websocket's own
/// message reader ended an overlong fragmented message with an error the inbox could only
/// swallow, and the connection closed as if all were well (1000).
struct AccessoryMessages {
    enum Step: Equatable {
        /// A whole message.
        case message([UInt8])
        /// A fragment; the message goes on.
        case more
        case refused(RelayError)
    }

    let maxLength: Int
    /// The fragments of the message begun and not yet ended.
    private var partial: [UInt8]?

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    /// One data frame's opcode, FIN bit and payload.
    mutating func take(_ opcode: WebSocketDataFrame.Opcode, fin: Bool, _ data: ByteBuffer) -> Step {
        switch opcode {
        case .text:
            return .refused(RelayError(.protocolViolation, "an accessory sends binary frames only"))
        case .binary:
            guard partial == nil else { return .refused(RelayError(.protocolViolation, "a message began before the one before it ended")) }
            partial = []
        case .continuation:
            guard partial != nil else { return .refused(RelayError(.protocolViolation, "a continuation frame with no message begun")) }
        }
        let length = partial!.count + data.readableBytes
        guard length <= maxLength else {
            partial = nil
            return .refused(RelayError(.tooLarge, "a message of more than \(maxLength) bytes; an ack is 9, a push at most \(maxLength)"))
        }
        partial! += data.readableBytesView
        guard fin else { return .more }
        defer { partial = nil }
        return .message(partial!)
    }
}
