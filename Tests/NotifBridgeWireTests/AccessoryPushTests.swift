import Foundation
import NotifBridgeWire
import Testing

/// The APNs body that carries an accessory's reply: exactly Apple's four fields, and a clear
/// refusal for anything else a network can hand the iPhone.
@Suite("Accessory push body")
struct AccessoryPushTests {
    static let push = AccessoryPush(
        encryptedData: Data((0..<40).map { UInt8($0) }),
        sessionIdentifier: "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B",
        keyID: [0xa0, 0x0f, 0x53, 0xd2],
        messageIndex: 7
    )

    @Test("Round trip, with the fields as Apple names and types them")
    func roundTrip() throws {
        let body = try Self.push.jsonBody()
        #expect(try AccessoryPush(jsonBody: body) == Self.push)
        let object = try JSONSerialization.jsonObject(with: body) as? [String: [String: String]]
        #expect(object?["aps"]?["messageIndex"] == "7")
        #expect(object?["aps"]?["keyID"] == "oA9T0g==")
        #expect(object?["aps"]?["sessionIdentifier"] == Self.push.sessionIdentifier)
        #expect(AccessoryPush.topic(bundleID: "org.notifbridge.app") == "org.notifbridge.app.push-type.accessory")
    }

    @Test("Bodies are refused for the field that is wrong", arguments: [
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"1"}}"#, nil),
        (#"{"aps":{"encryptedData":"!!","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"1"}}"#, "encryptedData is not base64"),
        (#"{"aps":{"encryptedData":"AAAA","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"1"}}"#, "shorter than nonce and tag"),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"not-a-uuid","keyID":"oA9T0g==","messageIndex":"1"}}"#, "sessionIdentifier is not a UUID"),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T","messageIndex":"1"}}"#, "keyID is 3 bytes"),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"-1"}}"#, "messageIndex is not a decimal"),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"4294967295"}}"#, nil),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":"4294967296"}}"#, "messageIndex is not a decimal"),
        (#"{"aps":{"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","sessionIdentifier":"9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B","keyID":"oA9T0g==","messageIndex":7}}"#, "string values"),
        (#"{"aps":{}}"#, "string values"),
    ] as [(String, String?)])
    func refusals(body: String, problem: String?) {
        do {
            _ = try AccessoryPush(jsonBody: Data(body.utf8))
            #expect(problem == nil)
        } catch {
            #expect(problem.map { error.description.contains($0) } == true, "\(error)")
        }
    }

    @Test("APNs' 4 KiB: a body of exactly 4096 bytes is taken, 4097 refused before parsing")
    func sizeBoundary() throws {
        let base = try Self.push.jsonBody()
        // Unknown keys are ignored, so padding one in makes a valid body of any size.
        func body(_ size: Int) -> Data {
            let prefix = Data(#"{"pad":""#.utf8)
            let suffix = Data(#"","#.utf8) + base.dropFirst()
            return prefix + Data(repeating: 0x61, count: size - prefix.count - suffix.count) + suffix
        }
        #expect(body(4096).count == 4096)
        #expect(try AccessoryPush(jsonBody: body(4096)) == Self.push)
        #expect(throws: WireError.self) { try AccessoryPush(jsonBody: body(4097)) }

        var large = Self.push
        large.encryptedData = Data(repeating: 1, count: 3000)
        #expect(throws: WireError.self) { try large.jsonBody() }
    }
}
