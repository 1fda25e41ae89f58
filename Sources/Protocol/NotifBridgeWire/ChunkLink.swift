/// What one side hears from a link, whatever carries it.
public enum LinkInbound: Sendable {
    /// One chunk (a TCP frame's payload, or one GATT write).
    case chunk([UInt8])
    /// Input the transport could not frame (a TCP frame header over the limits). A byte stream
    /// cannot be resynchronised after that: the accessory answers with a LinkError and closes.
    case invalid(WireError)
    /// The transport can now carry chunks of this length towards the host (a BLE central
    /// negotiated a new ATT MTU).
    case chunkLength(Int)
}

/// What carries a link. The session's rules follow it: Apple requires X-Wing on the local network
/// (and the internet), while P-256 is a Bluetooth suite, allowed on the loopback link that stands
/// in for Bluetooth during development.
public enum LinkKind: String, Sendable, CaseIterable {
    case bluetooth
    /// TCP from this machine: the development link.
    case loopback
    /// TCP from another machine.
    case localNetwork

    /// A TCP peer's kind, from its address as NIO prints it (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`).
    public static func tcp(peerAddress: String?) -> LinkKind {
        guard let address = peerAddress else { return .localNetwork }
        let v4 = address.hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address
        return v4.hasPrefix("127.") || address == "::1" ? .loopback : .localNetwork
    }
}

/// One connection carrying chunks between a host and an accessory: TCP on the development
/// link, GATT on Bluetooth LE. Both sides drive every kind through the same session code.
public struct ChunkLink: Sendable {
    /// Who is at the other end, for logs and the presenter.
    public var peer: String
    /// Who is behind the link, for limits and log throttling across its connections: the
    /// remote address without its port on TCP, the device address on Bluetooth.
    public var origin: String
    public var kind: LinkKind
    /// The chunk length for outbound messages when the link opens.
    public var chunkLength: Int
    public var inbound: AsyncThrowingStream<LinkInbound, any Error>
    /// Writes chunks in order; throws once the link is gone.
    public var write: @Sendable ([[UInt8]]) async throws -> Void
    /// Ends the link from this side; `inbound` then finishes.
    public var close: @Sendable () -> Void

    public init(
        peer: String,
        origin: String? = nil,
        kind: LinkKind,
        chunkLength: Int,
        inbound: AsyncThrowingStream<LinkInbound, any Error>,
        write: @escaping @Sendable ([[UInt8]]) async throws -> Void,
        close: @escaping @Sendable () -> Void
    ) {
        self.peer = peer
        self.origin = origin ?? peer
        self.kind = kind
        self.chunkLength = chunkLength
        self.inbound = inbound
        self.write = write
        self.close = close
    }
}
