import Crypto
import Foundation

/// What a provider token is signed with: the team's APNs auth key (the `.p8` file, a P-256 key
/// in PKCS #8 PEM) and the two 10-character identifiers Apple assigned.
public struct APNsSigningKey: Sendable {
    public static let identifierLength = 10
    public let teamID: String
    public let keyID: String
    let privateKey: P256.Signing.PrivateKey

    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey) throws(APNsError) {
        for (name, value) in [("team ID", teamID), ("key ID", keyID)] {
            guard value.utf8.count == Self.identifierLength, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) }) else {
                throw APNsError("the APNs \(name) must be \(Self.identifierLength) characters A–Z and 0–9, as Apple's developer account shows it")
            }
        }
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// Reads the `.p8` file's text.
    public init(teamID: String, keyID: String, pem: String) throws(APNsError) {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw APNsError("the APNs auth key is not a P-256 private key in PEM (the .p8 file from Apple): \(error)")
        }
        try self.init(teamID: teamID, keyID: keyID, privateKey: key)
    }

    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
}

public struct APNsError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// APNs token authentication: a JWT signed with ES256, `{"alg":"ES256","kid":keyID}` over
/// `{"iss":teamID,"iat":seconds}`, sent as `authorization: bearer <token>`.
public enum APNsProviderToken {
    public static func make(signingKey: APNsSigningKey, issuedAt: Date) throws(APNsError) -> String {
        let header = #"{"alg":"ES256","kid":"\#(signingKey.keyID)"}"#
        let claims = #"{"iss":"\#(signingKey.teamID)","iat":\#(Int64(issuedAt.timeIntervalSince1970.rounded(.down)))}"#
        let signingInput = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try signingKey.privateKey.signature(for: Data(signingInput.utf8))
        } catch {
            throw APNsError("signing the provider token failed: \(error)")
        }
        // JWS wants r ‖ s (64 bytes), not DER.
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }

    /// Base64 with the URL alphabet and no padding (RFC 7515 §2).
    public static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}

/// When to sign a new provider token. Apple asks for a new one at least every 60 minutes and no
/// more than one every 20 (APNs answers `TooManyProviderTokenUpdates` otherwise), so a token is
/// renewed at 50 minutes, and after `ExpiredProviderToken` only once it is 20 minutes old.
public struct APNsTokenSchedule: Sendable {
    public static let renewalAge: TimeInterval = 50 * 60
    public static let minimumAge: TimeInterval = 20 * 60

    public private(set) var current: (token: String, issuedAt: Date)?

    public init() {}

    /// The token to send now, signing a new one when there is none, it has reached the renewal
    /// age, or the clock has gone back past its issue time.
    public mutating func token(now: Date, sign: (Date) throws(APNsError) -> String) throws(APNsError) -> String {
        if let current {
            let age = now.timeIntervalSince(current.issuedAt)
            if age >= 0, age < Self.renewalAge { return current.token }
        }
        let token = try sign(now)
        current = (token, now)
        return token
    }

    /// APNs said the token expired: drops it so the next request signs a new one, unless it is
    /// younger than the minimum, which APNs would refuse too. Returns whether it was dropped.
    @discardableResult
    public mutating func expired(now: Date) -> Bool {
        guard let current, now.timeIntervalSince(current.issuedAt) >= Self.minimumAge else { return false }
        self.current = nil
        return true
    }
}
