import NotifBridgeCrypto

/// The frames between the relay and an accessory on its inbox connection (docs/PROTOCOL.md §11),
/// one per binary WebSocket message. The relay never looks inside a message: it is the ratchet
/// message of §10.3, ciphertext to everyone but the accessory.
///
/// ```
/// deliver (relay → accessory):  0x01 ‖ seq (8, LE) ‖ message (1 … maxMessageLength)
/// ack     (accessory → relay):  0x02 ‖ seq (8, LE)
/// push    (accessory → relay):  0x03 ‖ id (8, LE) ‖ APNs body (1 … maxPushBodyLength)
/// pushed  (relay → accessory):  0x04 ‖ id (8, LE) ‖ status (1)
/// ```
public enum RelayFrame: Sendable, Hashable {
    /// The next message of the accessory's queue, numbered by the relay.
    case deliver(seq: UInt64, message: [UInt8])
    /// Everything up to and including `seq` is stored on the accessory: the relay may forget it.
    case ack(seq: UInt64)
    /// A reply for the iPhone (§10.6): the relay pushes `body` through APNs to the push token
    /// the companion app registered. `id` is the accessory's, echoed in `pushed`.
    case push(id: UInt64, body: [UInt8])
    /// How the push `id` went.
    case pushed(id: UInt64, status: PushStatus)

    static let deliverType: UInt8 = 0x01
    static let ackType: UInt8 = 0x02
    static let pushType: UInt8 = 0x03
    static let pushedType: UInt8 = 0x04
    public static let headerLength = 9
    /// APNs refuses a payload over 4 KiB.
    public static let maxPushBodyLength = 4096

    /// The outcome of a push, as the relay reports it to the accessory.
    public enum PushStatus: UInt8, Sendable, Hashable, CaseIterable {
        /// APNs accepted it.
        case delivered = 0
        /// The companion app has registered no push token with the relay for this accessory.
        case noPushToken = 1
        /// APNs refused it for good (the token is no longer valid, the body was refused).
        case refused = 2
        /// Not now: APNs could not take it (unreachable, busy), or the accessory is over its
        /// push rate (``RateLimit``). Send it again later.
        case tryLater = 3
        /// This relay has no APNs key: it cannot push at all.
        case notConfigured = 4
    }

    /// What the accessory makes of a push's answer.
    public static func explain(_ status: PushStatus) -> String {
        switch status {
        case .delivered: "APNs accepted it"
        case .noPushToken: "the companion app has registered no push token with the relay"
        case .refused: "refused for good (APNs refused it, or it was not a push body)"
        case .tryLater: "not now (APNs is busy or unreachable, or the accessory is over its push rate at the relay); try again later"
        case .notConfigured: "the relay has no APNs key"
        }
    }

    public func encoded() -> [UInt8] {
        switch self {
        case .deliver(let seq, let message): Self.header(Self.deliverType, seq) + message
        case .ack(let seq): Self.header(Self.ackType, seq)
        case .push(let id, let body): Self.header(Self.pushType, id) + body
        case .pushed(let id, let status): Self.header(Self.pushedType, id) + [status.rawValue]
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
        case Self.pushType:
            guard bytes.count > Self.headerLength else { throw RelayError(.malformed, "a push frame carries no body") }
            guard bytes.count <= Self.headerLength + Self.maxPushBodyLength else {
                throw RelayError(.tooLarge, "a push body of \(bytes.count - Self.headerLength) bytes is over APNs' \(Self.maxPushBodyLength)")
            }
            self = .push(id: seq, body: Array(bytes.dropFirst(Self.headerLength)))
        case Self.pushedType:
            guard bytes.count == Self.headerLength + 1, let status = PushStatus(rawValue: bytes[bytes.index(bytes.startIndex, offsetBy: Self.headerLength)]) else {
                throw RelayError(.malformed, "a pushed frame is \(Self.headerLength + 1) bytes with a known status")
            }
            self = .pushed(id: seq, status: status)
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
    /// The shortest message the relay takes: a §10.3 message with an empty plaintext (key ID,
    /// index, nonce and tag). Anything shorter can never be opened, and would only take a place
    /// in the accessory's queue; it is not the operator's to change.
    public static let minMessageLength = InternetRatchet.minimumMessageLength

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
        maxMessageLength: Int = 256 * 1024 + InternetRatchet.minimumMessageLength, maxQueuedMessages: Int = 10_000, maxQueuedBytes: Int = 64 << 20,
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
