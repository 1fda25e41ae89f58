import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The accessory's side of replies over the internet: each `AccessoryEvent` is sealed under the
/// next accessory → host ratchet key and taken apart into an APNs push body (PROTOCOL.md §10.6).
/// The caller persists `ratchet` after each `push` and **before** the push leaves, so that a
/// crash can never seal two replies under one key.
public struct InternetReplySender: Sendable {
    public private(set) var ratchet: SendingRatchet
    public let keyID: [UInt8]

    public init(ratchet: SendingRatchet, keyID: [UInt8]) {
        self.ratchet = ratchet
        self.keyID = keyID
    }

    public mutating func push(_ event: AccessoryEvent, sessionIdentifier: UUID, nonces: NonceSource = .system) throws(RatchetError) -> AccessoryPush {
        let message = try ratchet.seal(WireCodec.encode(event), keyID: keyID, nonces: nonces)
        return Self.push(message, sessionIdentifier: sessionIdentifier)
    }

    /// The push body for a message already sealed and persisted elsewhere (the accessory's store
    /// seals with its saved chain and commits it: `AccessoryStore.sealForInternet`).
    public static func push(_ message: RatchetMessage, sessionIdentifier: UUID) -> AccessoryPush {
        AccessoryPush(encryptedData: message.sealed, sessionIdentifier: sessionIdentifier.uuidString, keyID: message.keyID, messageIndex: message.messageIndex)
    }
}
