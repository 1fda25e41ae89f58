import NotifBridgeWire

/// What the accessory's GATT peripheral does with each request from a central, with no IO: the
/// Mac accessory's `CBPeripheralManager` delegate hands every callback here and carries out the
/// answer. The rules are PROTOCOL.md §2.1's, as the BlueZ peripheral keeps them:
///
/// - The first central to write to the inbox owns the link; a second one is refused
///   (`writeNotPermitted`) while it lasts.
/// - Long (prepared) writes are refused (`requestNotSupported`), so is a value over 512 bytes
///   (`invalidAttributeValueLength`), and so is any write while `maxUnreadWrites` wait unread
///   (`insufficientResources`): memory stays bounded however fast a central writes.
/// - CoreBluetooth hands over several requests at once and takes one answer for all of them: a
///   batch is taken whole or refused whole, and nothing of a refused batch reaches the link.
/// - A peripheral manager is never told that a central disconnected; it learns that the central
///   unsubscribed from the outbox. Unsubscribing does not end the link (iOS resubscribes after
///   a reconnect): the link ends when no subscription comes back within `resubscribeGrace`,
///   and until then notifications wait.
public struct PeripheralRequestHandler<Central: Hashable & Sendable, Instant: InstantProtocol<Duration> & Sendable>: Sendable {
    /// One write request (`CBATTRequest`).
    public struct Write: Sendable, Hashable {
        public var central: Central
        /// The characteristic's UUID, upper-case as `CBUUID.uuidString` prints it.
        public var characteristic: String
        public var offset: Int
        public var value: [UInt8]

        public init(central: Central, characteristic: String, offset: Int = 0, value: [UInt8]) {
            self.central = central
            self.characteristic = characteristic
            self.offset = offset
            self.value = value
        }
    }

    public enum Effect: Sendable, Hashable {
        /// A new link from this central, carrying chunks of this length towards it.
        case open(Central, chunkLength: Int)
        case chunk([UInt8])
        /// The central's maximum notification length changed.
        case chunkLength(Int)
        case close(Central, reason: String)
    }

    /// How a batch of writes is answered: `respond(to: requests[0], withResult:)` once.
    public enum Answer: Sendable, Hashable {
        case accepted([Effect])
        case refused(ATTError, reason: String)
    }

    public static var defaultMaxUnreadWrites: Int { 512 }
    public static var defaultResubscribeGrace: Duration { .seconds(20) }

    public let maxUnreadWrites: Int
    public let resubscribeGrace: Duration
    public private(set) var owner: Central?
    public private(set) var chunkLength = GATTProfile.chunkLength(forATTMTU: 23)
    /// Set while the owner has unsubscribed: when the grace for it to come back ends.
    public private(set) var resubscribeDeadline: Instant?

    public init(maxUnreadWrites: Int = defaultMaxUnreadWrites, resubscribeGrace: Duration = defaultResubscribeGrace) {
        self.maxUnreadWrites = maxUnreadWrites
        self.resubscribeGrace = resubscribeGrace
    }

    /// Whether a notification can reach the owner now.
    public var mayNotify: Bool { owner != nil && resubscribeDeadline == nil }

    /// `didReceiveWrite`: a batch of writes. `unread` is how many chunks the link has not read
    /// yet; `maximumUpdateValueLength` is the writing central's (ATT_MTU − 3).
    public mutating func received(_ writes: [Write], unread: Int, maximumUpdateValueLength: Int, now: Instant) -> Answer {
        // The checks that do not depend on the link come before the expiry: a refusal carries
        // no effects, and an expired link's close must not be lost with it.
        for write in writes {
            if let refusal = Self.check(write) { return refusal }
            guard write.central == writes.first?.central else {
                return .refused(.writeNotPermitted, reason: "one batch holds writes of two centrals")
            }
        }
        guard writes.count <= maxUnreadWrites else {
            return .refused(.insufficientResources, reason: "a batch of \(writes.count) writes is more than the \(maxUnreadWrites) a link holds unread")
        }
        var effects = expire(now: now)
        guard let first = writes.first else { return .accepted(effects) }
        if let owner, owner != first.central {
            return .refused(.writeNotPermitted, reason: "another central is connected; this accessory serves one at a time")
        }
        // Unread chunks belong to the link this call just closed, not to the one it opens.
        let unread = effects.isEmpty ? unread : 0
        guard unread + writes.count <= maxUnreadWrites else {
            return .refused(.insufficientResources, reason: "\(unread) writes wait unread; write again later")
        }
        let length = GATTProfile.chunkLength(forMaximumValueLength: maximumUpdateValueLength)
        if owner == nil {
            owner = first.central
            chunkLength = length
            effects.append(.open(first.central, chunkLength: length))
        } else if length != chunkLength {
            chunkLength = length
            effects.append(.chunkLength(length))
        }
        // A write is as good as a subscription: the central is there.
        resubscribeDeadline = nil
        effects += writes.map { .chunk($0.value) }
        return .accepted(effects)
    }

    /// The checks one write must pass whoever sends it, in PROTOCOL.md §2.1's order.
    private static func check(_ write: Write) -> Answer? {
        guard write.characteristic == GATTProfile.inboxCharacteristicUUID else {
            return .refused(.writeNotPermitted, reason: "only the inbox takes writes")
        }
        guard write.offset == 0 else {
            return .refused(.requestNotSupported, reason: "long writes are not supported; write chunks of at most the ATT payload")
        }
        guard write.value.count <= WireLimits.maxAttributeValueLength else {
            return .refused(.invalidAttributeValueLength, reason: "\(write.value.count) bytes is over the \(WireLimits.maxAttributeValueLength) an attribute holds")
        }
        return nil
    }

    /// `didReceiveRead`: NotifBridge characteristics hold nothing to read.
    public func read(characteristic: String) -> ATTError { .readNotPermitted }

    /// `didSubscribeTo` the outbox.
    public mutating func subscribed(_ central: Central) {
        if central == owner { resubscribeDeadline = nil }
    }

    /// `didUnsubscribeFrom` the outbox: the owner has `resubscribeGrace` to come back.
    public mutating func unsubscribed(_ central: Central, now: Instant) {
        guard central == owner, resubscribeDeadline == nil else { return }
        resubscribeDeadline = now.advanced(by: resubscribeGrace)
    }

    /// Time passed; call it at `resubscribeDeadline` and before each batch of writes.
    public mutating func expire(now: Instant) -> [Effect] {
        guard let deadline = resubscribeDeadline, now >= deadline, let owner else { return [] }
        return end(owner, reason: "the central unsubscribed and did not subscribe again within \(resubscribeGrace)")
    }

    /// The accessory ends the link itself (the daemon closed it).
    public mutating func close() -> [Effect] {
        guard let owner else { return [] }
        return end(owner, reason: "closed by the accessory")
    }

    private mutating func end(_ central: Central, reason: String) -> [Effect] {
        owner = nil
        resubscribeDeadline = nil
        chunkLength = GATTProfile.chunkLength(forATTMTU: 23)
        return [.close(central, reason: reason)]
    }
}
