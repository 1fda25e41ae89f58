import NotifBridgeRelayCore

/// A stand-in for a §10.3 message in relay tests. The relay never opens what it queues, so any
/// bytes of at least ``RelayLimits/minMessageLength`` will do: `mark` tells messages apart and
/// `length` sets the size, for tests at a byte limit.
public func relayMessage(_ mark: UInt8, length: Int = RelayLimits.minMessageLength) -> [UInt8] {
    Array(repeating: mark, count: length)
}
