import NotifBridgeCrypto
import NotifBridgeWire

/// What the accessory's session and its connection ask the runner to carry out, in order. One
/// type for both: the session sends messages (``AccessorySession/Action``), the connection frames
/// them into chunks (``AccessoryConnection/Action``) and passes every other action on as it is.
public enum AccessoryAction<Outbound: Sendable>: Sendable {
    /// Send this to the host: a message from the session, its chunks from the connection.
    case send(Outbound)
    /// Persist this exchange (durably) before the KeyConfirm that follows is sent, with the
    /// starting points of its internet ratchets when its suite allows the internet (X-Wing).
    case persistExchange(KeyExchangeParameters, internet: InternetRatchetStart?)
    /// The host resumed the persisted exchange without a new key exchange.
    case resumedExchange(exchangeID: UInt64)
    /// Forget the exchange: its keys no longer decrypt.
    case forgetExchange(exchangeID: UInt64)
    /// Persist this new private key (0600) before the KeyOffer that follows is sent.
    case replaceIdentity(AccessoryPrivateKey)
    /// Apply a decrypted host event to the store, then call `delivered(_:outcome:)`.
    case deliver(AccessorySession.Delivery)
    /// A decrypted event was refused (it did not parse or broke a limit): log and show it.
    case refused(WireError)
    /// Close the connection after sending what precedes this action.
    case close(reason: String)

    /// The same action with its outbound payload transformed; every other case is unchanged.
    public func mapSend<T: Sendable>(_ transform: (Outbound) -> T) -> AccessoryAction<T> {
        switch self {
        case .send(let outbound): .send(transform(outbound))
        case .persistExchange(let parameters, let internet): .persistExchange(parameters, internet: internet)
        case .resumedExchange(let id): .resumedExchange(exchangeID: id)
        case .forgetExchange(let id): .forgetExchange(exchangeID: id)
        case .replaceIdentity(let key): .replaceIdentity(key)
        case .deliver(let delivery): .deliver(delivery)
        case .refused(let error): .refused(error)
        case .close(let reason): .close(reason: reason)
        }
    }
}

/// What an exchange exports for the internet transport (docs/PROTOCOL.md §10.1): the key ID its
/// messages carry and the two chain keys, from which the store starts both ratchets at index 0.
public struct InternetRatchetStart: Sendable {
    public var keyID: [UInt8]
    public var chainKeys: InternetChainKeys

    public init(keyID: [UInt8], chainKeys: InternetChainKeys) {
        self.keyID = keyID
        self.chainKeys = chainKeys
    }
}
