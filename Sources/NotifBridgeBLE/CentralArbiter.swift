import NotifBridgeWire

/// Decides what each GATT event means for the accessory's one host link: the first central to
/// write opens it, a second central is refused while it lasts, and a disconnect or an
/// unsubscribe ends it. Pure: events in, effects out.
struct CentralArbiter: Sendable {
    enum Effect: Equatable, Sendable {
        /// A new link from this central, carrying chunks of this length towards it.
        case open(device: String, chunkLength: Int)
        case chunk([UInt8])
        /// The central's ATT MTU changed.
        case chunkLength(Int)
        case close(device: String, reason: String)
    }

    /// The ATT MTU every LE link starts with, when BlueZ does not say.
    static let defaultATTMTU = 23

    private(set) var activeDevice: String?
    private(set) var chunkLength = GATTProfile.chunkLength(forATTMTU: defaultATTMTU)
    private(set) var notifying = false

    mutating func write(_ write: InboxWrite) throws(InboxWrite.Refusal) -> [Effect] {
        let length = GATTProfile.chunkLength(forATTMTU: write.mtu ?? Self.defaultATTMTU)
        guard let active = activeDevice else {
            activeDevice = write.device
            chunkLength = length
            return [.open(device: write.device, chunkLength: length), .chunk(write.value)]
        }
        guard active == write.device else {
            throw InboxWrite.Refusal(name: BlueZ.notPermitted, message: "another central is connected; this accessory serves one at a time")
        }
        var effects: [Effect] = []
        if write.mtu != nil, length != chunkLength {
            chunkLength = length
            effects.append(.chunkLength(length))
        }
        return effects + [.chunk(write.value)]
    }

    mutating func startNotify() {
        notifying = true
    }

    /// The subscriber went away: nothing can reach the host any more, so its link ends.
    mutating func stopNotify() -> [Effect] {
        notifying = false
        return end(reason: "the central unsubscribed from the outbox")
    }

    mutating func disconnected(device: String) -> [Effect] {
        guard device == activeDevice else { return [] }
        return end(reason: "the central disconnected")
    }

    private mutating func end(reason: String) -> [Effect] {
        guard let device = activeDevice else { return [] }
        activeDevice = nil
        chunkLength = GATTProfile.chunkLength(forATTMTU: Self.defaultATTMTU)
        return [.close(device: device, reason: reason)]
    }
}
