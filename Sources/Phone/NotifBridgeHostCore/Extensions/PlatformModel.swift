import Foundation

// The shapes of the platform types the companion app's extensions exchange with iOS
// (AccessoryTransportExtension and AccessoryNotifications, docs in reference/apple-api.md §2, §5,
// §6). The extensions' logic is written against these, so the iOS adapters convert one-to-one.

/// `TransportMessage`: the feature session UUID and its bytes (ciphertext towards the accessory,
/// plaintext once the system has decrypted an accessory message for the data provider).
public struct TransportMessage: Sendable, Hashable {
    public var sessionID: UUID
    public var data: Data

    public init(sessionID: UUID, data: Data) {
        self.sessionID = sessionID
        self.data = data
    }
}

/// `AccessoryMessage.Error`: what a relay's completion reports when delivery did not happen.
public enum AccessoryMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The link failed but may recover: the system retries the same message.
    case transportFailed
    /// No link: the system tries another transport, or holds the message until one appears.
    case transportUnavailable

    public var description: String {
        switch self {
        case .transportFailed: "transport failed"
        case .transportUnavailable: "transport unavailable"
        }
    }
}

/// `AccessoryMessage.Result`, passed to the transport and security completions.
public typealias AccessoryMessageResult = Result<Void, AccessoryMessageError>

/// `SecurityMessage`: one half of the key exchange, as the security extension relays it.
public struct SecurityMessage: Sendable, Hashable, CustomStringConvertible {
    public enum KeyType: Sendable, Hashable {
        /// Accessory → system: starts the exchange.
        case publicKey
        /// System → accessory: the HPKE encapsulated key, with the Bluetooth identifier.
        case encapsulatedKey
    }

    public var keyType: KeyType
    /// `String(describing:)` of the platform's enum: "XWing" or "P256".
    public var cipherSuite: String
    /// `String(describing:)` of the version: "Version1".
    public var version: String
    public var key: Data
    public var identifier: String?

    public init(keyType: KeyType, cipherSuite: String, version: String, key: Data, identifier: String? = nil) {
        self.keyType = keyType
        self.cipherSuite = cipherSuite
        self.version = version
        self.key = key
        self.identifier = identifier
    }

    public var description: String {
        "SecurityMessage(\(keyType), \(cipherSuite)-\(version), \(key.count) bytes\(identifier.map { ", identifier \($0)" } ?? ""))"
    }
}

/// `NotificationResponse`: an interaction on the accessory, handed to iOS as if made on the phone.
public struct NotificationResponse: Sendable, Hashable {
    public var sourceIdentifier: String
    public var notificationIdentifier: String
    public var actionIdentifier: String
    public var userText: String?

    public init(sourceIdentifier: String, notificationIdentifier: String, actionIdentifier: String, userText: String?) {
        self.sourceIdentifier = sourceIdentifier
        self.notificationIdentifier = notificationIdentifier
        self.actionIdentifier = actionIdentifier
        self.userText = userText
    }
}

/// `AccessoryError` cases the data provider's calls can throw.
public enum AccessoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `addNotification` did not learn in time whether the accessory alerted.
    case coordinationTimeout
    /// The accessory could never accept this notification (too large for it).
    case notificationTooLarge(String)

    public var description: String {
        switch self {
        case .coordinationTimeout: "coordination timeout: no receipt from the accessory in time"
        case .notificationTooLarge(let detail): "notification too large: \(detail)"
        }
    }
}
