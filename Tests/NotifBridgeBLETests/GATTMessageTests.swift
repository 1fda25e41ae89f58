import NotifBridgeDBus
import NotifBridgeWire
import Testing
@testable import NotifBridgeBLE

/// What the peripheral and central say to bluetoothd, built and parsed without a bus.
@Suite("GATT messages")
struct GATTMessageTests {
    private static let device = "/org/bluez/hci0/dev_00_AA_01_01_00_01"

    private func write(_ value: [UInt8], _ options: DBusProperties) -> [DBusValue] {
        [.bytes(value), .properties(options)]
    }

    @Test("The application BlueZ reads: one primary service with an inbox to write and an outbox to notify")
    func application() throws {
        let objects = GATTApplication.managedObjects()
        let encoded = try DBusValue.managedObjects(objects).asManagedObjects()
        #expect(encoded[GATTApplication.service]?["org.bluez.GattService1"]?["UUID"]?.stringValue == GATTProfile.serviceUUID.lowercased())
        #expect(encoded[GATTApplication.service]?["org.bluez.GattService1"]?["Primary"]?.boolValue == true)
        let inbox = try #require(encoded[GATTApplication.inbox]?["org.bluez.GattCharacteristic1"])
        #expect(inbox["Flags"]?.stringArrayValue == ["write", "write-without-response"])
        #expect(inbox["Service"] == .objectPath(GATTApplication.service))
        let outbox = try #require(encoded[GATTApplication.outbox]?["org.bluez.GattCharacteristic1"])
        #expect(outbox["Flags"]?.stringArrayValue == ["notify"])
        #expect(outbox["UUID"]?.stringValue == GATTProfile.outboxCharacteristicUUID.lowercased())
        let advertisement = GATTApplication.advertisementProperties(name: "NotifBridge-A1")
        #expect(advertisement["ServiceUUIDs"]?.stringArrayValue == [GATTProfile.serviceUUID.lowercased()])
        #expect(advertisement["LocalName"]?.stringValue == "NotifBridge-A1")
        #expect(advertisement["Type"]?.stringValue == "peripheral")
    }

    @Test("A notification is a PropertiesChanged of the outbox's Value")
    func notification() throws {
        let signal = GATTApplication.notification([1, 2, 3])
        #expect(signal.path == GATTApplication.outbox)
        let (interface, changed, invalidated) = try signal.asPropertiesChanged()
        #expect(interface == "org.bluez.GattCharacteristic1")
        #expect(changed["Value"]?.bytesValue == [1, 2, 3])
        #expect(invalidated.isEmpty)
    }

    @Test("WriteValue options: device, MTU and type are read")
    func writeOptions() throws {
        let parsed = try InboxWrite(arguments: write([9, 8], ["device": .objectPath(Self.device), "mtu": .uint16(185), "type": .string("command"), "link": .string("LE")]))
        #expect(parsed.value == [9, 8] && parsed.device == Self.device && parsed.mtu == 185 && parsed.kind == .command)
        let plain = try InboxWrite(arguments: write([1], ["device": .objectPath(Self.device)]))
        #expect(plain.kind == .request && plain.mtu == nil)
    }

    @Test("WriteValue refusals name the reason", arguments: [
        ([DBusValue.bytes([1])], "org.freedesktop.DBus.Error.InvalidArgs"),
        ([.bytes([1]), .properties([:])], "org.bluez.Error.NotPermitted"),
        ([.bytes([1]), .properties(["device": .objectPath(device), "offset": .uint16(4)])], "org.bluez.Error.NotSupported"),
        ([.bytes([1]), .properties(["device": .objectPath(device), "type": .string("reliable")])], "org.bluez.Error.NotSupported"),
        ([.bytes([1]), .properties(["device": .objectPath(device), "type": .string("bogus")])], "org.bluez.Error.NotSupported"),
        ([.bytes(Array(repeating: 0, count: WireLimits.maxAttributeValueLength + 1)), .properties(["device": .objectPath(device)])], "org.bluez.Error.InvalidValueLength"),
    ])
    func writeRefusals(arguments: [DBusValue], error: String) {
        #expect {
            try InboxWrite(arguments: arguments)
        } throws: { thrown in
            (thrown as? InboxWrite.Refusal)?.name == error
        }
    }

    @Test("Value length: the largest attribute value is taken, one byte more is refused")
    func valueLengthBoundary() throws {
        let options: DBusProperties = ["device": .objectPath(Self.device)]
        _ = try InboxWrite(arguments: write(Array(repeating: 0, count: WireLimits.maxAttributeValueLength), options))
        #expect(throws: InboxWrite.Refusal.self) { try InboxWrite(arguments: write(Array(repeating: 0, count: WireLimits.maxAttributeValueLength + 1), options)) }
    }

    @Test("Adapter names", arguments: [("hci0", "/org/bluez/hci0"), ("hci12", "/org/bluez/hci12"), ("hci", nil), ("eth0", nil), ("hci0/../x", nil), ("hci1a", nil)])
    func adapters(name: String, path: String?) {
        #expect(BlueZ.adapterPath(name) == path)
    }

    @Test("A device's address comes from its object path")
    func address() {
        #expect(BlueZ.address(of: Self.device) == "00:AA:01:01:00:01")
        #expect(BlueZ.address(of: "/org/bluez/hci0") == "/org/bluez/hci0")
    }

    @Test("The central finds the advertiser and its two characteristics in bluetoothd's objects")
    func centralLookup() {
        let service = GATTProfile.serviceUUID.lowercased()
        let objects: DBusManagedObjects = [
            "/org/bluez/hci1": ["org.bluez.Adapter1": [:]],
            "/org/bluez/hci0/dev_00_AA_01_01_00_01": ["org.bluez.Device1": ["UUIDs": .stringArray([service])]],
            "/org/bluez/hci1/dev_11_22_33_44_55_66": ["org.bluez.Device1": ["UUIDs": .stringArray(["0000180f-0000-1000-8000-00805f9b34fb"])]],
            "/org/bluez/hci1/dev_00_AA_01_00_00_00": ["org.bluez.Device1": ["UUIDs": .stringArray([service.uppercased()])]],
            "/org/bluez/hci1/dev_00_AA_01_00_00_00/service0010/char0011": ["org.bluez.GattCharacteristic1": ["UUID": .string(GATTProfile.inboxCharacteristicUUID.lowercased())]],
            "/org/bluez/hci1/dev_00_AA_01_00_00_00/service0010/char0013": ["org.bluez.GattCharacteristic1": ["UUID": .string(GATTProfile.outboxCharacteristicUUID.lowercased())]],
        ]
        #expect(BlueZClient.advertiser(in: objects, under: "/org/bluez/hci1") == "/org/bluez/hci1/dev_00_AA_01_00_00_00")
        #expect(BlueZClient.advertiser(in: objects, under: "/org/bluez/hci2") == nil)
        // A known device whose cached UUIDs bluetoothd dropped, seen again in this scan by name.
        let known: DBusManagedObjects = [
            "/org/bluez/hci1/dev_00_AA_01_00_00_00": ["org.bluez.Device1": ["UUIDs": .stringArray([]), "Name": .string("NotifBridge"), "RSSI": .int16(-40)]],
            "/org/bluez/hci1/dev_00_AA_01_00_00_09": ["org.bluez.Device1": ["UUIDs": .stringArray([]), "Name": .string("NotifBridge-2")]],
            "/org/bluez/hci1/dev_00_AA_01_00_00_0A": ["org.bluez.Device1": ["Name": .string("Headphones"), "RSSI": .int16(-30)]],
        ]
        #expect(BlueZClient.advertiser(in: known, under: "/org/bluez/hci1") == "/org/bluez/hci1/dev_00_AA_01_00_00_00")
        let found = BlueZClient.characteristics(in: objects, of: "/org/bluez/hci1/dev_00_AA_01_00_00_00")
        #expect(found?.inbox == "/org/bluez/hci1/dev_00_AA_01_00_00_00/service0010/char0011")
        #expect(found?.outbox == "/org/bluez/hci1/dev_00_AA_01_00_00_00/service0010/char0013")
        #expect(BlueZClient.characteristics(in: objects, of: "/org/bluez/hci0/dev_00_AA_01_01_00_01") == nil)
    }
}
