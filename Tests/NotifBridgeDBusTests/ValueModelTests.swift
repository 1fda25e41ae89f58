import NotifBridgeDBus
import Testing

/// The value model on its own: signatures, validation, the type grammar and the helpers for
/// property maps. No sd-bus involved.
@Suite("D-Bus value model")
struct ValueModelTests {
    @Test("every kind reports its D-Bus signature")
    func signatures() {
        let cases: [(DBusValue, String)] = [
            (.byte(1), "y"), (.bool(true), "b"), (.int16(1), "n"), (.uint16(1), "q"), (.int32(1), "i"),
            (.uint32(1), "u"), (.int64(1), "x"), (.uint64(1), "t"), (.double(1), "d"), (.string(""), "s"),
            (.objectPath("/"), "o"), (.signature(""), "g"), (.array(element: "s", []), "as"), (.bytes([]), "ay"),
            (.dictionary(key: "s", value: "v", []), "a{sv}"), (.structure([.string(""), .bytes([])]), "(say)"),
            (.variant(.uint16(1)), "v"), (.managedObjects([:]), "a{oa{sa{sv}}}"),
        ]
        for (value, signature) in cases {
            #expect(value.signature == signature, "\(value)")
        }
        #expect(DBusValue.signature(of: [.bytes([]), .properties([:])]) == "aya{sv}")
    }

    @Test("an array of bytes equals the ay fast path, as both encode the same")
    func byteArrayEquality() {
        #expect(DBusValue.array(element: "y", [.byte(1), .byte(2)]) == .bytes([1, 2]))
        #expect(DBusValue.bytes([1, 2]) != .bytes([2, 1]))
        #expect(DBusValue.array(element: "y", [.byte(1)]).bytesValue == [1])
        #expect(DBusValue.double(.nan) == .double(.nan))
    }

    @Test("well-formed values validate")
    func validValues() throws {
        try DBusValue.properties(["UUID": .string("1234"), "Flags": .stringArray(["read", "notify"])]).validate()
        try DBusValue.structure([.objectPath("/org/bluez/hci0"), .variant(.bytes([1]))]).validate()
        try DBusValue.array(element: "a{sv}", [.properties([:])]).validate()
        try DBusValue.validate([.string("ok"), .signature("a{oa{sa{sv}}}")])
    }

    @Test(
        "mismatched or malformed values are rejected before encoding",
        arguments: [
            DBusValue.array(element: "s", [.int32(1)]),
            .array(element: "{sv}", []),
            .array(element: "", []),
            .array(element: "ss", []),
            .dictionary(key: "v", value: "s", []),
            .dictionary(key: "s", value: "v", [(.string("a"), .string("not a variant"))]),
            .dictionary(key: "s", value: "", []),
            .structure([]),
            .objectPath("relative/path"),
            .objectPath("/trailing/"),
            .objectPath("/double//slash"),
            .objectPath("/bad-char"),
            .string("nul\u{0}inside"),
            .signature("a{vs}"),
            .signature("("),
            .signature("a" + String(repeating: "a", count: 32) + "y"),
            .structure(Array(repeating: .byte(0), count: 300)),
            .variant(.array(element: "s", [.objectPath("/")])),
        ]
    )
    func invalidValues(_ value: DBusValue) {
        #expect(throws: DBusError.self) { try value.validate() }
    }

    @Test("nesting is capped at 64 levels")
    func nestingLimit() throws {
        var value = DBusValue.byte(0)
        for _ in 0..<DBusValue.maxNesting { value = .variant(value) }
        try value.validate()
        #expect(throws: DBusError.self) { try DBusValue.variant(value).validate() }
    }

    @Test("the signature grammar accepts complete types and rejects fragments")
    func grammar() {
        for valid in ["", "s", "a{sv}", "a{oa{sa{sv}}}", "(ay(s))", "aav", "a(ii)", "sa{sv}as"] {
            #expect(DBusSignature.isValid(valid), "\(valid)")
        }
        for invalid in ["a", "{sv}", "a{sv", "a{vs}", "a{s}", "()", "(s", "s)", "r", "e", "z", "a{s(s)s}"] {
            #expect(!DBusSignature.isValid(invalid), "\(invalid)")
        }
        #expect(DBusSignature.completeTypes(in: "aya{sv}(so)v") == ["ay", "a{sv}", "(so)", "v"])
        #expect(DBusSignature.isSingleCompleteType("a{sv}"))
        #expect(!DBusSignature.isSingleCompleteType("ss"))
        #expect(DBusSignature.isBasic("o") && !DBusSignature.isBasic("v") && !DBusSignature.isBasic("as"))
    }

    @Test("names follow the specification")
    func names() {
        #expect(DBusNames.isValidInterfaceName("org.bluez.GattCharacteristic1"))
        #expect(DBusNames.isValidInterfaceName("org.bluez.Error.NotPermitted"))
        for bad in ["org", "org..bluez", "1org.bluez", "org.1bluez", "org.bluez.", "org.blu-ez", ""] {
            #expect(!DBusNames.isValidInterfaceName(bad), "\(bad)")
        }
        #expect(DBusNames.isValidMemberName("WriteValue"))
        #expect(!DBusNames.isValidMemberName("Write.Value"))
        #expect(!DBusNames.isValidMemberName(""))
        #expect(DBusNames.isValidObjectPath("/"))
        #expect(DBusNames.isValidObjectPath("/org/bluez/hci0/dev_00_AA_01_01_00_01"))
        #expect(!DBusNames.isValidObjectPath(""))
    }

    @Test("property maps and managed objects convert both ways")
    func propertyHelpers() throws {
        let properties: DBusProperties = ["UUID": .string("abc"), "Primary": .bool(true), "Value": .bytes([1, 2])]
        #expect(try DBusValue.properties(properties).asProperties() == properties)

        let objects: DBusManagedObjects = [
            "/app/svc0": ["org.bluez.GattService1": ["UUID": .string("s"), "Primary": .bool(true)]],
            "/app/svc0/chr0": [
                "org.bluez.GattCharacteristic1": ["Service": .objectPath("/app/svc0"), "Flags": .stringArray(["write"])],
                "org.freedesktop.DBus.Properties": [:],
            ],
        ]
        #expect(try DBusValue.managedObjects(objects).asManagedObjects() == objects)
        #expect(try DBusValue.interfaces(objects["/app/svc0"]!).asInterfaces() == objects["/app/svc0"]!)
    }

    @Test("helpers reject values of another type with both signatures named")
    func helperMismatches() {
        #expect(throws: DBusError.typeMismatch(expected: "a{sv}", actual: "as")) { try DBusValue.stringArray([]).asProperties() }
        #expect(throws: DBusError.typeMismatch(expected: "a{oa{sa{sv}}}", actual: "a{sv}")) {
            try DBusValue.properties([:]).asManagedObjects()
        }
        let call = MethodCall(path: "/", interface: nil, member: "WriteValue", arguments: [.bytes([]), .string("x")])
        #expect(throws: DBusError.typeMismatch(expected: "aya{sv}", actual: "ays")) { try call.arguments(matching: "aya{sv}") }
        let notChanged = DBusSignal(path: "/", interface: "org.example.Iface", member: "Changed")
        #expect(throws: DBusError.self) { try notChanged.asPropertiesChanged() }
        #expect(DBusValue.string("x").uint32Value == nil)
        #expect(DBusValue.array(element: "i", [.int32(1)]).stringArrayValue == nil)
        #expect(DBusValue.objectPathArray(["/a"]).stringArrayValue == ["/a"])
    }

    @Test("PropertiesChanged is built as sa{sv}as and read back")
    func propertiesChanged() throws {
        let signal = DBusSignal.propertiesChanged(
            path: "/app/svc0/chr0", interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([9])], invalidated: ["Old"]
        )
        #expect(signal.interface == "org.freedesktop.DBus.Properties")
        #expect(DBusValue.signature(of: signal.arguments) == "sa{sv}as")
        let parts = try signal.asPropertiesChanged()
        #expect(parts.interface == "org.bluez.GattCharacteristic1")
        #expect(parts.changed == ["Value": .bytes([9])])
        #expect(parts.invalidated == ["Old"])
    }
}
