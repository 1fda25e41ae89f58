import NotifBridgeWire

/// What a GATT central (the iOS transport extension) writes to the accessory's inbox, in order,
/// with no IO: link messages wait here until a link is open, are framed at that link's chunk
/// length when their turn comes, and go out one write at a time.
///
/// One write at a time because CoreBluetooth reports write requests one by one
/// (`didWriteValueFor`) and flow-controls write commands (`canSendWriteWithoutResponse`,
/// `peripheralIsReady(toSendWriteWithoutResponse:)`); the adapter calls `wrote` when the next
/// write may go, whichever type it uses. A message is framed only when it reaches the front,
/// so an MTU exchange applies to the messages framed after it (PROTOCOL.md §2.1).
///
/// `Token` names a message whose outcome someone waits for (the system's completion handler);
/// link messages of our own (Hello, BindFeature) have none.
public struct CentralWriteQueue<Token: Hashable & Sendable>: Sendable {
    public enum Effect: Sendable, Hashable {
        /// Write this chunk to the inbox; then call `wrote`.
        case write([UInt8])
        /// Hand this outcome to the message's completion.
        case completed(Token, TransportOutcome)
    }

    /// Messages that may wait at once. Past it a message fails at once (`.failed`, so the system
    /// retries later) instead of growing the extension's memory while the accessory is slow.
    public let maxQueuedMessages: Int

    private struct Message: Sendable {
        var bytes: [UInt8]
        var token: Token?
    }

    /// The message being written: its token and the chunks still to write.
    private struct Current: Sendable {
        var token: Token?
        var chunks: ArraySlice<[UInt8]>
    }

    private var waiting: [Message] = []
    private var current: Current?
    private var framer: ChunkFramer?
    private var writeOutstanding = false

    public static var defaultMaxQueuedMessages: Int { 64 }

    public init(maxQueuedMessages: Int = CentralWriteQueue.defaultMaxQueuedMessages) {
        precondition(maxQueuedMessages >= 1, "the queue must hold one message")
        self.maxQueuedMessages = maxQueuedMessages
    }

    /// Whether a link is open for writing.
    public var isOpen: Bool { framer != nil }
    /// Messages not yet fully written, the one being written included.
    public var count: Int { waiting.count + (current == nil ? 0 : 1) }
    /// The chunk length messages are framed at now; nil while no link is open.
    public var chunkLength: Int? { framer?.chunkLength }

    /// Queues one encoded link message; writing starts at once if a link is open and idle.
    public mutating func enqueue(_ message: [UInt8], token: Token? = nil) -> [Effect] {
        guard count < maxQueuedMessages else {
            return token.map { [.completed($0, .failed)] } ?? []
        }
        waiting.append(Message(bytes: message, token: token))
        return pump()
    }

    /// A link is open. `maximumWriteLength` is what the stack reports for one write command
    /// (ATT_MTU − 3). Message ids start again at 0 on every link (PROTOCOL.md §3.1).
    public mutating func opened(maximumWriteLength: Int) -> [Effect] {
        framer = ChunkFramer(chunkLength: GATTProfile.chunkLength(forMaximumValueLength: maximumWriteLength))
        writeOutstanding = false
        return pump()
    }

    /// The ATT MTU changed: messages framed from now on use the new length.
    public mutating func maximumWriteLengthChanged(_ length: Int) {
        framer?.setChunkLength(GATTProfile.chunkLength(forMaximumValueLength: length))
    }

    /// The last write finished: `failed` when the accessory refused it or the link broke.
    ///
    /// A refused write ends the link (PROTOCOL.md §2.1: a host that sees a write error treats
    /// the link as failed), so everything waiting fails with it and the system retries.
    public mutating func wrote(failed: Bool = false) -> [Effect] {
        guard writeOutstanding else { return [] }
        writeOutstanding = false
        if failed { return closed() }
        return pump()
    }

    /// The link is gone: the message being written and every waiting one with a token fail
    /// (`.failed`: the system retries, over this link once it is back or another transport).
    /// Messages without a token are dropped: they belong to the link that ended.
    public mutating func closed(outcome: TransportOutcome = .failed) -> [Effect] {
        framer = nil
        writeOutstanding = false
        var effects: [Effect] = []
        if let token = current?.token { effects.append(.completed(token, outcome)) }
        current = nil
        for message in waiting {
            if let token = message.token { effects.append(.completed(token, outcome)) }
        }
        waiting.removeAll()
        return effects
    }

    /// Fails every waiting message with a token without touching an open link, as when Bluetooth
    /// has become unavailable before any link opened.
    public mutating func failWaiting(_ outcome: TransportOutcome) -> [Effect] {
        let failed = waiting.compactMap { message in message.token.map { Effect.completed($0, outcome) } }
        waiting.removeAll()
        return failed
    }

    /// Starts the next write if the link is open and idle; completes messages as their last
    /// chunk is acknowledged.
    private mutating func pump() -> [Effect] {
        guard var framer, !writeOutstanding else { return [] }
        var effects: [Effect] = []
        while true {
            if var message = current {
                if let chunk = message.chunks.popFirst() {
                    current = message
                    writeOutstanding = true
                    effects.append(.write(chunk))
                    break
                }
                if let token = message.token { effects.append(.completed(token, .sent)) }
                current = nil
            }
            guard !waiting.isEmpty else { break }
            let next = waiting.removeFirst()
            current = Current(token: next.token, chunks: framer.frame(next.bytes)[...])
        }
        self.framer = framer
        return effects
    }
}
