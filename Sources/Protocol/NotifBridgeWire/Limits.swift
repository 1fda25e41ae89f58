/// Every limit the protocol enforces before it buffers bytes (docs/PROTOCOL.md §7).
///
/// A peer that exceeds one gets a `LinkError` naming it; nothing else on the link is dropped.
public struct WireLimits: Sendable, Hashable {
    /// Largest reassembled message, checked against the first chunk's declared length.
    public var maxMessageLength: Int
    /// Largest chunk: one GATT write or notification, or one length-prefixed TCP frame.
    public var maxChunkLength: Int
    /// Messages that may be partly received at once (interleaved message ids).
    public var maxPartialMessages: Int
    /// Bytes reserved by all partial messages together (their declared lengths).
    public var maxBufferedBytes: Int
    /// A partial message with no new chunk for this long is dropped.
    public var partialMessageTimeout: Duration
    /// A connection that has not completed a Hello by then is closed: until it does, it is
    /// nobody's, and holds a connection slot and buffers for nothing.
    public var helloTimeout: Duration

    public init(
        maxMessageLength: Int = WireLimits.defaultMaxMessageLength,
        maxChunkLength: Int = WireLimits.defaultMaxChunkLength,
        maxPartialMessages: Int = 4,
        maxBufferedBytes: Int = 512 * 1024,
        partialMessageTimeout: Duration = .seconds(10),
        helloTimeout: Duration = .seconds(10)
    ) {
        self.maxMessageLength = maxMessageLength
        self.maxChunkLength = maxChunkLength
        self.maxPartialMessages = maxPartialMessages
        self.maxBufferedBytes = maxBufferedBytes
        self.partialMessageTimeout = partialMessageTimeout
        self.helloTimeout = helloTimeout
    }

    public static let `default` = WireLimits()

    /// 256 KiB: room for icons and a small attachment, small enough for a Pi-class accessory.
    public static let defaultMaxMessageLength = 256 * 1024
    /// 16 KiB chunks on TCP; BLE chunks are bounded by the ATT MTU instead (at most 512).
    public static let defaultMaxChunkLength = 16 * 1024
    /// The smallest chunk a link may use: ATT MTU 23 minus the 3-byte write header.
    public static let minChunkLength = 20
    /// ATT attribute values are at most 512 bytes (Core Spec Vol 3 Part F §3.2.9).
    public static let maxAttributeValueLength = 512
}
