import Foundation
import NotifBridgeWire

/// The transport extension's logic (`AccessoryTransportAppExtension`), with no IO: it carries
/// the system's ciphertext for one feature session to the accessory, and the accessory's sealed
/// replies back for `sendMessageToDataProvider`. It never sees plaintext.
///
/// On the link, a feature session is named once by BindFeature and then by a one-byte
/// reference, so every Sealed message spends one byte rather than a 36-character UUID.
public struct TransportRelay: Sendable {
    /// The reference of the notification feature; the only feature this version carries.
    public static let notificationsRef: UInt32 = 1

    public let sessionID: UUID
    public private(set) var bound = false

    public init(sessionID: UUID) {
        self.sessionID = sessionID
    }

    /// The BindFeature that must precede the session's first Sealed message on a link.
    public mutating func bind() -> LinkMessage {
        bound = true
        var message = LinkMessage()
        message.bindFeature = .with {
            $0.featureRef = Self.notificationsRef
            $0.featureID = sessionID.uuidString
        }
        return message
    }

    public mutating func linkClosed() {
        bound = false
    }

    /// `messageReceived(_:completion:)`: wraps the system's ciphertext for the link.
    public func outbound(_ message: TransportMessage) throws(AccessoryMessageError) -> LinkMessage {
        guard bound, message.sessionID == sessionID else { throw .transportUnavailable }
        return Self.sealed(message.data)
    }

    /// The Sealed link message for one ciphertext, also used to size messages before sending.
    public static func sealed(_ ciphertext: Data) -> LinkMessage {
        var link = LinkMessage()
        link.sealed = .with {
            $0.featureRef = notificationsRef
            $0.ciphertext = ciphertext
        }
        return link
    }

    /// The encoded length of `sealed(ciphertext)` for a ciphertext of this length, without
    /// building it: `LinkMessage.sealed` (field 6) holding `feature_ref` (field 1, a one-byte
    /// value) and `ciphertext` (field 3). The system checks every event against the
    /// accessory's maximum before sealing it.
    public static func sealedLength(ciphertextLength length: Int) -> Int {
        let inner = 2 + (length > 0 ? 1 + varintLength(length) + length : 0)
        return 1 + varintLength(inner) + inner
    }

    private static func varintLength(_ value: Int) -> Int {
        var value = UInt64(value), bytes = 1
        while value >= 0x80 {
            value >>= 7
            bytes += 1
        }
        return bytes
    }

    /// An accessory's Sealed message becomes what the relay hands to `sendMessageToDataProvider`.
    /// It names the feature by its reference, or by its ID when the reference is 0 (PROTOCOL
    /// §4.1): an accessory whose bindings a second Hello cleared answers that way.
    public func inbound(_ sealed: Notifbridge_V1_Sealed) -> TransportMessage? {
        let named = sealed.featureRef == 0 ? sealed.featureID == sessionID.uuidString : sealed.featureRef == Self.notificationsRef
        guard named else { return nil }
        return TransportMessage(sessionID: sessionID, data: sealed.ciphertext)
    }
}
