import Foundation

/// An accessory's reply on its way to the iPhone over the internet: the body of an APNs push of
/// type `accessory`, which iOS decrypts itself and hands to the data provider's message handler
/// (docs/PROTOCOL.md §10.6). Its fields are one ratchet message (§10.3) taken apart:
/// `{"aps":{"encryptedData":b64,"sessionIdentifier":"<uuid>","keyID":b64,"messageIndex":"<n>"}}`.
public struct AccessoryPush: Sendable, Hashable {
    /// APNs refuses a payload over 4 KiB.
    public static let maxBodyBytes = 4096
    public static let keyIDLength = 4
    /// `nonce(12) ‖ tag(16)` around an empty plaintext.
    public static let minimumEncryptedDataLength = 28
    /// The `apns-push-type` header.
    public static let pushType = "accessory"

    /// The `apns-topic` header for the companion app `bundleID`.
    public static func topic(bundleID: String) -> String {
        "\(bundleID).push-type.accessory"
    }

    /// `nonce ‖ ciphertext ‖ tag`.
    public var encryptedData: Data
    /// The transport session's UUID, uppercase as iOS writes it.
    public var sessionIdentifier: String
    public var keyID: [UInt8]
    public var messageIndex: UInt32

    public init(encryptedData: Data, sessionIdentifier: String, keyID: [UInt8], messageIndex: UInt32) {
        self.encryptedData = encryptedData
        self.sessionIdentifier = sessionIdentifier
        self.keyID = keyID
        self.messageIndex = messageIndex
    }

    private struct Body: Codable {
        struct APS: Codable {
            var encryptedData: String
            var sessionIdentifier: String
            var keyID: String
            var messageIndex: String
        }

        var aps: APS
    }

    /// The JSON body, refused when APNs would refuse it for its size.
    public func jsonBody() throws(WireError) -> Data {
        try validate()
        let body = Body(aps: .init(
            encryptedData: encryptedData.base64EncodedString(),
            sessionIdentifier: sessionIdentifier,
            keyID: Data(keyID).base64EncodedString(),
            messageIndex: String(messageIndex)
        ))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(body)
        } catch {
            throw WireError(.malformedMessage, "the push body does not encode: \(error)")
        }
        guard data.count <= Self.maxBodyBytes else {
            throw WireError(.tooLarge, "the push body is \(data.count) bytes; APNs takes at most \(Self.maxBodyBytes)")
        }
        return data
    }

    /// Parses a push body as the iPhone receives it; anything but the four fields in their forms
    /// is refused, saying which field. Unknown keys are ignored, as APNs may add its own.
    public init(jsonBody: some DataProtocol) throws(WireError) {
        guard jsonBody.count <= Self.maxBodyBytes else {
            throw WireError(.tooLarge, "a push body of \(jsonBody.count) bytes is over APNs' \(Self.maxBodyBytes)")
        }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(jsonBody))
        } catch {
            throw WireError(.malformedMessage, "the push body is not {\"aps\":{encryptedData, sessionIdentifier, keyID, messageIndex}} with string values")
        }
        guard let encryptedData = Data(base64Encoded: body.aps.encryptedData) else {
            throw WireError(.malformedMessage, "aps.encryptedData is not base64")
        }
        guard let keyID = Data(base64Encoded: body.aps.keyID) else {
            throw WireError(.malformedMessage, "aps.keyID is not base64")
        }
        let digits = body.aps.messageIndex
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let messageIndex = UInt32(digits) else {
            throw WireError(.malformedMessage, "aps.messageIndex is not a decimal number from 0 to \(UInt32.max)")
        }
        self.init(encryptedData: encryptedData, sessionIdentifier: body.aps.sessionIdentifier, keyID: Array(keyID), messageIndex: messageIndex)
        try validate()
    }

    private func validate() throws(WireError) {
        guard keyID.count == Self.keyIDLength else {
            throw WireError(.malformedMessage, "aps.keyID is \(keyID.count) bytes, not \(Self.keyIDLength)")
        }
        guard encryptedData.count >= Self.minimumEncryptedDataLength else {
            throw WireError(.malformedMessage, "aps.encryptedData is \(encryptedData.count) bytes, shorter than nonce and tag (\(Self.minimumEncryptedDataLength))")
        }
        guard UUID(uuidString: sessionIdentifier) != nil else {
            throw WireError(.malformedMessage, "aps.sessionIdentifier is not a UUID")
        }
    }
}
