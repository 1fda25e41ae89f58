@_exported import SwiftProtobuf

public typealias LinkMessage = Notifbridge_V1_LinkMessage
public typealias HostEvent = Notifbridge_V1_HostEvent
public typealias AccessoryEvent = Notifbridge_V1_AccessoryEvent
public typealias WireNotification = Notifbridge_V1_Notification
public typealias WireNotificationID = Notifbridge_V1_NotificationID
public typealias WireAlertingContext = Notifbridge_V1_AlertingContext

/// The protocol version this code speaks (Hello.protocol_version).
public let notifBridgeProtocolVersion: UInt32 = 1

/// Decoding that turns SwiftProtobuf's errors into `WireError`s naming the message type.
public enum WireCodec {
    public static func decode<M: SwiftProtobuf.Message>(
        _ type: M.Type,
        from bytes: some Collection<UInt8>
    ) throws(WireError) -> M {
        do {
            return try M(serializedBytes: Array(bytes))
        } catch {
            throw WireError(.malformedMessage, "\(bytes.count) bytes are not a valid \(M.protoMessageName): \(error)")
        }
    }

    public static func encode(_ message: some SwiftProtobuf.Message) -> [UInt8] {
        // Serialising a proto3 message we built ourselves only fails for unset required fields,
        // which proto3 does not have.
        (try? message.serializedBytes()) ?? []
    }
}

extension LinkMessage {
    /// A short name for logs and errors: the message kind, never its contents.
    public var kindName: String {
        switch body {
        case .hello: "Hello"
        case .keyOffer: "KeyOffer"
        case .keyMaterial: "KeyMaterial"
        case .keyConfirm: "KeyConfirm"
        case .bindFeature: "BindFeature"
        case .sealed: "Sealed"
        case .resync: "Resync"
        case .error: "LinkError"
        case nil: "empty"
        }
    }

    public static func linkError(_ code: Notifbridge_V1_LinkError.Code, _ detail: String) -> LinkMessage {
        var message = LinkMessage()
        message.error = .with {
            $0.code = code
            $0.detail = detail.truncatedToUTF8(maxLinkErrorDetailLength)
        }
        return message
    }
}

/// LinkError.detail is at most this many UTF-8 bytes (nanopb max_length).
public let maxLinkErrorDetailLength = 128

extension String {
    /// The longest prefix of whole characters that fits in `maxBytes` UTF-8 bytes.
    public func truncatedToUTF8(_ maxBytes: Int) -> String {
        guard utf8.count > maxBytes else { return self }
        var result = ""
        var used = 0
        for character in self {
            let length = character.utf8.count
            guard used + length <= maxBytes else { break }
            result.append(character)
            used += length
        }
        return result
    }
}

extension WireNotificationID {
    public init(source: String, notification: String) {
        self.init()
        sourceIdentifier = source
        notificationIdentifier = notification
    }
}
