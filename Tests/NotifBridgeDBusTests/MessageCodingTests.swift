import CSystemdBus
@testable import NotifBridgeDBus
import Testing

/// Values written into real sd-bus messages and read back, with no daemon: the messages are
/// built on an ``OfflineBus`` and sealed, which makes them readable like received ones.
@Suite("sd-bus message coding")
struct MessageCodingTests {
    static let everyKind: [DBusValue] = [
        .byte(0xFF), .bool(true), .bool(false), .int16(.min), .uint16(.max), .int32(-123_456), .uint32(.max),
        .int64(.min), .uint64(.max), .double(-1.5), .double(.infinity), .double(.nan),
        .string(""), .string("héllo ✓ 🔔"), .objectPath("/"), .objectPath("/org/bluez/hci0"),
        .signature(""), .signature("a{oa{sa{sv}}}"),
        .array(element: "s", [.string("a"), .string("b")]),
        .array(element: "ai", [.array(element: "i", [.int32(1), .int32(2)]), .array(element: "i", [])]),
        .array(element: "ay", [.bytes([1]), .bytes([])]),
        .array(element: "(sy)", [.structure([.string("x"), .byte(1)])]),
        .array(element: "v", [.variant(.string("s")), .variant(.bytes([3]))]),
        .array(element: "o", []),
        .bytes([]), .bytes(Array(0...255)),
        .dictionary(key: "u", value: "s", [(.uint32(1), .string("one")), (.uint32(2), .string("two"))]),
        .dictionary(key: "s", value: "as", []),
        .structure([.string("s"), .uint16(517), .bytes([0, 1]), .structure([.variant(.bool(true))])]),
        .variant(.variant(.int32(7))),
    ]

    @Test("each kind survives a round trip on its own", arguments: everyKind)
    func singleRoundTrip(_ value: DBusValue) throws {
        let bus = try OfflineBus()
        #expect(try bus.roundTrip([value]) == [value])
    }

    @Test("all kinds survive a round trip as one body, and sd-bus records the same signature")
    func wholeBodyRoundTrip() throws {
        let bus = try OfflineBus()
        #expect(try bus.roundTrip(Self.everyKind) == Self.everyKind)
        #expect(try bus.bodySignature(of: Self.everyKind) == DBusValue.signature(of: Self.everyKind))
        #expect(try bus.roundTrip([]) == [])
    }

    @Test("ay is always read back through the bytes fast path")
    func bytesFastPath() throws {
        let bus = try OfflineBus()
        let decoded = try bus.roundTrip([.array(element: "y", [.byte(5), .byte(6)])])
        guard case .bytes(let bytes) = decoded.first else {
            Issue.record("expected .bytes, got \(decoded)")
            return
        }
        #expect(bytes == [5, 6])
    }

    @Test("nested a{sv} keeps every layer of variants")
    func nestedProperties() throws {
        let options: DBusValue = .properties([
            "device": .objectPath("/org/bluez/hci1/dev_00_AA_01_00_00_00"),
            "mtu": .uint16(517),
            "nested": .properties(["deeper": .properties(["leaf": .bytes([1, 2, 3])])]),
        ])
        let decoded = try OfflineBus().roundTrip([.bytes([0, 0x63]), options])
        #expect(decoded == [.bytes([0, 0x63]), options])
        let properties = try decoded[1].asProperties()
        #expect(properties["mtu"] == .uint16(517))
        #expect(try properties["nested"]?.asProperties()["deeper"]?.asProperties()["leaf"] == .bytes([1, 2, 3]))
    }

    @Test("a GetManagedObjects reply round-trips as a{oa{sa{sv}}}")
    func managedObjects() throws {
        let objects: DBusManagedObjects = [
            "/org/notifbridge/app/svc0": [
                "org.bluez.GattService1": ["UUID": .string("12345678-1234-5678-1234-56789abc0000"), "Primary": .bool(true)],
            ],
            "/org/notifbridge/app/svc0/chr0": [
                "org.bluez.GattCharacteristic1": [
                    "UUID": .string("12345678-1234-5678-1234-56789abc0001"),
                    "Service": .objectPath("/org/notifbridge/app/svc0"),
                    "Flags": .stringArray(["read", "write", "write-without-response", "notify"]),
                    "Value": .bytes([]),
                ],
            ],
            "/org/notifbridge/app/empty": [:],
        ]
        let decoded = try OfflineBus().roundTrip([.managedObjects(objects)])
        #expect(decoded.count == 1)
        #expect(try decoded[0].asManagedObjects() == objects)
        #expect(try OfflineBus().roundTrip([.managedObjects([:])]) == [.managedObjects([:])])
    }

    @Test(
        "invalid values fail with a Swift error before sd-bus sees them",
        arguments: [
            DBusValue.array(element: "s", [.uint32(1)]),
            .dictionary(key: "s", value: "v", [(.string("k"), .uint32(1))]),
            .objectPath("no-slash"),
            .string("cut\u{0}here"),
            .structure([]),
        ]
    )
    func rejectedOnWrite(_ value: DBusValue) throws {
        let bus = try OfflineBus()
        #expect {
            try bus.roundTrip([.string("before"), value])
        } throws: { error in
            guard case .invalidValue = error as? DBusError else { return false }
            return true
        }
    }

    @Test("a body nested deeper than the limit is refused on reading, not recursed into")
    func deepNestingOnRead() throws {
        let levels = DBusValue.maxNesting + 6
        #expect {
            try OfflineBus().withSealedMessage { message throws(DBusError) in
                for level in 0..<levels {
                    let contents = level == levels - 1 ? "y" : "v"
                    try DBusError.check(sd_bus_message_open_container(message, typeCode("v"), contents), "open")
                }
                try DBusError.check(withUnsafePointer(to: UInt8(1)) { sd_bus_message_append_basic(message, typeCode("y"), $0) }, "byte")
                for _ in 0..<levels {
                    try DBusError.check(sd_bus_message_close_container(message), "close")
                }
            } read: { message throws(DBusError) in
                try MessageReader.readBody(message)
            }
        } throws: { error in
            guard case .malformedMessage(let reason) = error as? DBusError else { return false }
            return reason.contains("nested deeper")
        }
    }
}
