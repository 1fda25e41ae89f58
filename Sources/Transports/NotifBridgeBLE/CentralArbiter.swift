import NotifBridgeWire

/// Decides what each GATT event means for the accessory's one host link: the first central to
/// write opens it, a second central is refused while it lasts, and its disconnect ends it.
/// Subscription to the outbox is tracked apart from the link, because bluetoothd reports it
/// in any order relative to connects and writes (see `Subscription`). Pure: events in,
/// effects out.
struct CentralArbiter: Sendable {
    /// What bluetoothd has said about the outbox. It calls StartNotify when the first central
    /// enables notifications and StopNotify when the last one disables them or disconnects;
    /// neither names the central. It says nothing for a central whose stored CCC value did not
    /// change, such as one that subscribed before this process registered the service, so
    /// "never told" is not "not subscribed".
    enum Subscription: Equatable, Sendable {
        case unknown
        case subscribed
        case unsubscribed
    }

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
    private(set) var subscription = Subscription.unknown

    /// Whether a notification can reach the central now. While unsubscribed, the peripheral
    /// waits a while for the central to subscribe again (iOS does after a reconnect) before
    /// it gives the link up.
    var mayNotify: Bool { subscription != .unsubscribed }

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
        subscription = .subscribed
    }

    /// Does not end the link: the central may subscribe again while connected, and its
    /// disconnect, which bluetoothd reports separately, is what ends the link.
    mutating func stopNotify() {
        subscription = .unsubscribed
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
