/// How a message handed to a transport ended, in the words of Apple's completion contract
/// (`AccessoryMessage.Result`, reference/apple-api.md §5.1): the adapters map it one-to-one.
public enum TransportOutcome: Sendable, Hashable {
    /// Every chunk was written (and, for write requests, acknowledged).
    case sent
    /// The link failed but may recover: `.failure(.transportFailed)`, the system retries.
    case failed
    /// No Bluetooth link can be had now: `.failure(.transportUnavailable)`, the system tries
    /// another transport or waits for one.
    case unavailable
}
