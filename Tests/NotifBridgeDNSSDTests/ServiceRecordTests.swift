import NotifBridgeDNSSD
import Testing

/// The TXT record and instance names: what the accessory publishes reads back, and what anyone
/// else on the network publishes is bounded and refused plainly.
@Suite("DNS-SD records")
struct ServiceRecordTests {
    static let keyID: [UInt8] = [0xe9, 0x11, 0xae, 0x32, 0x93, 0x69, 0x97, 0x2f]

    @Test("Our record: v=1 and the key ID in hex, and back")
    func roundTrip() throws {
        let txt = NotifBridgeService.TXT(keyID: Self.keyID)
        #expect(txt.entries.map { String(decoding: $0, as: UTF8.self) } == ["v=1", "key=e911ae329369972f"])
        #expect(try NotifBridgeService.TXT(entries: txt.entries) == txt)
    }

    @Test("Records from the network", arguments: [
        (["v=1", "key=E911AE329369972F", "other=x", "flag"], nil),
        (["key=e911ae329369972f"], "no v"),
        (["v=1"], "no key"),
        (["v=one", "key=e911ae329369972f"], "not a protocol version"),
        (["v=1", "key=e911ae32936997"], "not 16 hex digits"),
        (["v=1", "key=e911ae329369972g"], "not 16 hex digits"),
    ] as [([String], String?)])
    func parsing(entries: [String], problem: String?) {
        do {
            let txt = try NotifBridgeService.TXT(entries: entries.map { Array($0.utf8) })
            #expect(problem == nil && txt.keyID == Self.keyID)
        } catch {
            #expect(problem.map { error.description.contains($0) } == true, "\(error)")
        }
    }

    @Test("At most 16 entries of at most 255 bytes are read", arguments: [(16, 255, true), (17, 255, false), (16, 256, false)])
    func limits(count: Int, length: Int, accepted: Bool) {
        let base = NotifBridgeService.TXT(keyID: Self.keyID).entries
        let filler = Array("x=".utf8) + [UInt8](repeating: 0x61, count: length - 2)
        let entries = base + [[UInt8]](repeating: filler, count: count - base.count)
        #expect(((try? NotifBridgeService.TXT(entries: entries)) != nil) == accepted)
    }

    @Test("The iPhone picks the first instance that speaks v1, by name or key ID if asked")
    func choosing() {
        func instance(_ name: String, version: Int = 1, key: UInt8 = 1) -> NotifBridgeService.Instance {
            .init(name: name, hostName: "h.local", address: "10.0.0.1", port: 7420, txt: .success(.init(protocolVersion: version, keyID: [UInt8](repeating: key, count: 8))))
        }
        let broken = NotifBridgeService.Instance(name: "A broken", hostName: "h", address: "10.0.0.2", port: 1, txt: .failure(.init("no v")))
        let instances = [instance("C"), instance("B", version: 2), broken, instance("D", key: 4)]
        #expect(NotifBridgeService.choose(instances)?.name == "C")
        #expect(NotifBridgeService.choose(instances, name: "D")?.name == "D")
        #expect(NotifBridgeService.choose(instances, keyID: [UInt8](repeating: 4, count: 8))?.name == "D")
        #expect(NotifBridgeService.choose(instances, name: "B") == nil)
        #expect(NotifBridgeService.choose([]) == nil)
    }

    @Test("Instance names fit one DNS label (63 bytes), cut between characters, without controls", arguments: [
        (String(repeating: "a", count: 63), 63), (String(repeating: "a", count: 64), 63), (String(repeating: "é", count: 40), 62),
    ])
    func names(wanted: String, bytes: Int) {
        #expect(NotifBridgeService.instanceName(wanted).utf8.count == bytes)
        #expect(NotifBridgeService.instanceName("Kitchen\u{1B}[2J display") == "Kitchen[2J display")
        #expect(NotifBridgeService.instanceName("\u{7}") == "NotifBridge")
    }
}
