import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// What iOS does with an accessory's reply that arrives as an APNs push: parse the body, open it
/// with the accessory → host ratchet, and hand the plaintext to the data provider's message
/// handler as a `TransportMessage`. The transport extension is not involved (apple-api.md §6.4).
public struct InternetReplyReceiver: Sendable {
    public private(set) var ratchet: ReceivingRatchet
    public let keyID: [UInt8]

    public init(ratchet: ReceivingRatchet, keyID: [UInt8]) {
        self.ratchet = ratchet
        self.keyID = keyID
    }

    /// Why a push was dropped: its body, or the ratchet's refusal.
    public enum Refusal: Error, Sendable, CustomStringConvertible {
        case body(WireError)
        case ratchet(RatchetError)

        public var description: String {
            switch self {
            case .body(let error): "push body: \(error)"
            case .ratchet(let error): "push message: \(error)"
            }
        }
    }

    /// The message for the data provider, or a refusal that leaves the ratchet as it was. The
    /// system persists `ratchet` after each message that opens.
    public mutating func receive(pushBody: some DataProtocol) throws(Refusal) -> TransportMessage {
        let push: AccessoryPush
        do {
            push = try AccessoryPush(jsonBody: pushBody)
        } catch {
            throw .body(error)
        }
        guard let sessionID = UUID(uuidString: push.sessionIdentifier) else {
            throw .body(WireError(.malformedMessage, "aps.sessionIdentifier is not a UUID"))
        }
        let message = RatchetMessage(keyID: push.keyID, messageIndex: push.messageIndex, sealed: push.encryptedData)
        do {
            return TransportMessage(sessionID: sessionID, data: try ratchet.open(message, keyID: keyID))
        } catch {
            throw .ratchet(error)
        }
    }
}
