import Crypto
import Foundation
import NotifBridgeRelayCore
import Testing

/// Provider tokens as APNs checks them, and when they are renewed.
@Suite("APNs provider tokens")
struct APNsProviderTokenTests {
    static let key = P256.Signing.PrivateKey(compactRepresentable: false)

    private func base64URLDecode(_ text: Substring) throws -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return try #require(Data(base64Encoded: base64))
    }

    @Test("An ES256 JWT: kid and iss as given, iat in whole seconds, a signature over header.claims")
    func token() throws {
        let signingKey = try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: Self.key)
        let token = try APNsProviderToken.make(signingKey: signingKey, issuedAt: Date(timeIntervalSince1970: 1_778_490_000.9))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        let header = try JSONSerialization.jsonObject(with: base64URLDecode(parts[0])) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "KEY1234567"])
        let claims = try JSONSerialization.jsonObject(with: base64URLDecode(parts[1])) as? [String: Any]
        #expect(claims?["iss"] as? String == "TEAM123456")
        #expect((claims?["iat"] as? NSNumber)?.int64Value == 1_778_490_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: base64URLDecode(parts[2]))
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!Self.key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])x".utf8)))
    }

    @Test("Team and key IDs are 10 characters A–Z, 0–9", arguments: [
        ("TEAM123456", true), ("TEAM12345", false), ("TEAM1234567", false), ("team123456", false), ("TEAM12345-", false),
    ])
    func identifiers(value: String, valid: Bool) {
        #expect(((try? APNsSigningKey(teamID: value, keyID: "KEY1234567", privateKey: Self.key)) != nil) == valid)
        #expect(((try? APNsSigningKey(teamID: "TEAM123456", keyID: value, privateKey: Self.key)) != nil) == valid)
    }

    @Test("The .p8 file's PEM is read; anything else is refused plainly")
    func pem() throws {
        let signingKey = try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", pem: Self.key.pemRepresentation)
        #expect(signingKey.publicKey.rawRepresentation == Self.key.publicKey.rawRepresentation)
        #expect(throws: APNsError.self) { try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----") }
    }

    @Test("Renewal: kept below 50 minutes, signed again at 50, and when the clock went back", arguments: [
        (0.0, false), (50 * 60 - 1.0, false), (50 * 60.0, true), (-1.0, true),
    ])
    func renewal(age: TimeInterval, renews: Bool) throws {
        let start = Date(timeIntervalSince1970: 1_778_490_000)
        var schedule = APNsTokenSchedule()
        var signed = 0
        let sign: (Date) throws(APNsError) -> String = { date in
            signed += 1
            return "token-\(date.timeIntervalSince1970)"
        }
        let first = try schedule.token(now: start, sign: sign)
        let second = try schedule.token(now: start.addingTimeInterval(age), sign: sign)
        #expect(signed == (renews ? 2 : 1))
        #expect((first != second) == renews)
    }

    @Test("After ExpiredProviderToken: dropped once 20 minutes old, kept before", arguments: [
        (20 * 60 - 1.0, false), (20 * 60.0, true),
    ])
    func expiredAnswer(age: TimeInterval, dropped: Bool) throws {
        let start = Date(timeIntervalSince1970: 1_778_490_000)
        var schedule = APNsTokenSchedule()
        _ = try schedule.token(now: start) { _ throws(APNsError) in "t" }
        #expect(schedule.expired(now: start.addingTimeInterval(age)) == dropped)
        #expect((schedule.current == nil) == dropped)
    }
}
