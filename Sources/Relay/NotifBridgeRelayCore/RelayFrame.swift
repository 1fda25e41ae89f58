/// The frames between the relay and an accessory on its inbox connection (docs/PROTOCOL.md §11),
/// one per binary WebSocket message. The relay never looks inside a message: it is the ratchet
/// message of §10.3, ciphertext to everyone but the accessory.
///
/// ```
/// deliver (relay → accessory):  0x01 ‖ seq (8, LE) ‖ message (1 … maxMessageLength)
/// ack     (accessory → relay):  0x02 ‖ seq (8, LE)
/// ```
public enum RelayFrame: Sendable, Hashable {
    /// The next message of the accessory's queue, numbered by the relay.
    case deliver(seq: UInt64, message: [UInt8])
    /// Everything up to and including `seq` is stored on the accessory: the relay may forget it.
    case ack(seq: UInt64)

    static let deliverType: UInt8 = 0x01
    static let ackType: UInt8 = 0x02
    public static let headerLength = 9

    public func encoded() -> [UInt8] {
        switch self {
        case .deliver(let seq, let message): Self.header(Self.deliverType, seq) + message
        case .ack(let seq): Self.header(Self.ackType, seq)
        }
    }

    /// Parses one frame, checking its length against `limits` before anything is copied.
    public init(decoding bytes: some Collection<UInt8>, limits: RelayLimits = RelayLimits()) throws(RelayError) {
        guard bytes.count >= Self.headerLength else {
            throw RelayError(.malformed, "a relay frame is at least \(Self.headerLength) bytes, got \(bytes.count)")
        }
        guard bytes.count <= Self.headerLength + limits.maxMessageLength else {
            throw RelayError(.tooLarge, "a relay frame of \(bytes.count) bytes is over the limit of \(Self.headerLength + limits.maxMessageLength)")
        }
        let type = bytes[bytes.startIndex]
        let seq = bytes.dropFirst().prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch type {
        case Self.deliverType:
            guard bytes.count > Self.headerLength else { throw RelayError(.malformed, "a deliver frame carries no message") }
            self = .deliver(seq: seq, message: Array(bytes.dropFirst(Self.headerLength)))
        case Self.ackType:
            guard bytes.count == Self.headerLength else {
                throw RelayError(.malformed, "an ack frame is \(Self.headerLength) bytes, got \(bytes.count)")
            }
            self = .ack(seq: seq)
        default:
            throw RelayError(.malformed, "unknown relay frame type 0x\(String(type, radix: 16))")
        }
    }

    private static func header(_ type: UInt8, _ seq: UInt64) -> [UInt8] {
        [type] + (0..<8).map { UInt8(truncatingIfNeeded: seq >> (8 * $0)) }
    }
}

/// The relay's named limits. The defaults fit what an accessory accepts over the internet (the
/// largest Bluetooth plaintext, 256 KiB, plus the ratchet's 36 bytes of header, nonce and tag).
public struct RelayLimits: Sendable, Hashable {
    /// The largest message the relay takes for an accessory.
    public var maxMessageLength: Int
    /// Messages waiting for one accessory; a post past it is refused, not a waiting one dropped.
    public var maxQueuedMessages: Int
    /// Bytes waiting for one accessory, likewise.
    public var maxQueuedBytes: Int
    /// Messages sent to an accessory and not yet acknowledged: what one connection holds in flight.
    public var window: Int
    /// How long a message waits for its accessory before the relay drops it.
    public var timeToLive: Duration

    public init(
        maxMessageLength: Int = 256 * 1024 + 36, maxQueuedMessages: Int = 10_000, maxQueuedBytes: Int = 64 << 20,
        window: Int = 64, timeToLive: Duration = .seconds(7 * 24 * 3600)
    ) {
        self.maxMessageLength = maxMessageLength
        self.maxQueuedMessages = maxQueuedMessages
        self.maxQueuedBytes = maxQueuedBytes
        self.window = window
        self.timeToLive = timeToLive
    }
}

public struct RelayError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case malformed, tooLarge, queueFull, unauthorized, protocolViolation
    }

    public var code: Code
    public var detail: String
    public var description: String { "\(code.rawValue): \(detail)" }

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }
}
