import HummingbirdWebSocket
import NIOCore
@testable import NotifBridgeRelay
import NotifBridgeRelayCore
import Testing

/// The inbox's reader of the accessory's frames (§11.5): whole messages up to the limit, in one
/// frame or in fragments; anything else refused before it is buffered.
@Suite("Accessory messages on the inbox")
struct AccessoryMessagesTests {
    typealias Frame = (opcode: WebSocketDataFrame.Opcode, fin: Bool, length: Int)

    static let limit = 20

    @Test("frames in, steps out", arguments: [
        ([(.binary, true, 20)] as [Frame], ["message 20"]),
        ([(.binary, true, 21)], ["refused tooLarge"]),
        ([(.binary, false, 10), (.continuation, false, 0), (.continuation, true, 10)], ["more", "more", "message 20"]),
        ([(.binary, false, 10), (.continuation, true, 11)], ["more", "refused tooLarge"]),
        ([(.binary, true, 0), (.binary, true, 9)], ["message 0", "message 9"]),
        ([(.text, true, 3)], ["refused protocolViolation"]),
        ([(.continuation, true, 3)], ["refused protocolViolation"]),
        ([(.binary, false, 3), (.binary, true, 3)], ["more", "refused protocolViolation"]),
    ])
    func steps(frames: [Frame], expected: [String]) {
        var messages = AccessoryMessages(maxLength: Self.limit)
        let steps = frames.map { frame in
            switch messages.take(frame.opcode, fin: frame.fin, ByteBuffer(repeating: 1, count: frame.length)) {
            case .message(let bytes): "message \(bytes.count)"
            case .more: "more"
            case .refused(let error): "refused \(error.code.rawValue)"
            }
        }
        #expect(steps == expected)
    }
}
