import NotifBridgeDBus
import NotifBridgeWire

/// The accessory's GATT application and advertisement as BlueZ reads them over D-Bus: the
/// NotifBridge service (docs/PROTOCOL.md §2) with its inbox and outbox characteristics. Pure:
/// builds and parses message bodies only.
enum GATTApplication {
    static let root = "/org/notifbridge"
    static let application = "/org/notifbridge/gatt"
    static let service = "/org/notifbridge/gatt/service0"
    /// Host → accessory chunks: write and write-without-response.
    static let inbox = "/org/notifbridge/gatt/service0/char0"
    /// Accessory → host chunks: notify.
    static let outbox = "/org/notifbridge/gatt/service0/char1"
    static let advertisement = "/org/notifbridge/advertisement0"

    /// What `ObjectManager.GetManagedObjects` on the application returns.
    static func managedObjects() -> DBusManagedObjects {
        [
            service: [BlueZ.gattService: [
                "UUID": .string(GATTProfile.serviceUUID.lowercased()),
                "Primary": .bool(true),
            ]],
            inbox: [BlueZ.gattCharacteristic: [
                "UUID": .string(GATTProfile.inboxCharacteristicUUID.lowercased()),
                "Service": .objectPath(service),
                "Flags": .stringArray(["write", "write-without-response"]),
            ]],
            outbox: [BlueZ.gattCharacteristic: [
                "UUID": .string(GATTProfile.outboxCharacteristicUUID.lowercased()),
                "Service": .objectPath(service),
                "Flags": .stringArray(["notify"]),
            ]],
        ]
    }

    /// The advertisement's properties: the service UUID and name that AccessorySetupKit's
    /// `NSAccessorySetupBluetoothServices` and `NSAccessorySetupBluetoothNames` match.
    static func advertisementProperties(name: String) -> DBusProperties {
        [
            "Type": .string("peripheral"),
            "ServiceUUIDs": .stringArray([GATTProfile.serviceUUID.lowercased()]),
            "LocalName": .string(name),
        ]
    }

    /// The PropertiesChanged signal that makes bluetoothd notify one chunk to the subscriber.
    static func notification(_ chunk: [UInt8]) -> DBusSignal {
        .propertiesChanged(path: outbox, interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(chunk)])
    }
}

/// One `GattCharacteristic1.WriteValue(ay value, a{sv} options)` call on the inbox.
struct InboxWrite: Equatable, Sendable {
    enum Kind: String, Sendable {
        /// Write request: answered once the handler returns.
        case request
        /// Write command (write without response).
        case command
        /// Prepared (long) write; refused, since every chunk fits one ATT payload.
        case reliable
    }

    var value: [UInt8]
    /// The central's object path, e.g. `/org/bluez/hci0/dev_00_AA_01_01_00_01`.
    var device: String
    /// The link's ATT MTU, when BlueZ reports it.
    var mtu: Int?
    var kind: Kind
    var offset: Int

    struct Refusal: Error, Equatable, Sendable {
        var name: String
        var message: String
    }

    /// Reads the call's arguments, refusing what the accessory never accepts: a value longer
    /// than a chunk may be, an offset (long writes), or a call without a device.
    init(arguments: [DBusValue]) throws(Refusal) {
        guard arguments.count == 2, let value = arguments[0].bytesValue, let options = try? arguments[1].asProperties() else {
            throw Refusal(name: DBusErrorName.invalidArgs, message: "WriteValue takes (ay value, a{sv} options)")
        }
        guard value.count <= WireLimits.maxAttributeValueLength else {
            throw Refusal(name: BlueZ.invalidValueLength, message: "a chunk is at most \(WireLimits.maxAttributeValueLength) bytes; this write has \(value.count)")
        }
        guard case .objectPath(let device)? = options["device"] else {
            throw Refusal(name: BlueZ.notPermitted, message: "WriteValue without a device option")
        }
        let offset = options["offset"]?.uint16Value.map(Int.init) ?? 0
        guard offset == 0 else {
            throw Refusal(name: BlueZ.notSupported, message: "long writes (offset \(offset)) are not supported; write whole chunks")
        }
        let type = options["type"]?.stringValue ?? "request"
        guard let kind = Kind(rawValue: type), kind != .reliable else {
            throw Refusal(name: BlueZ.notSupported, message: "write type \(type) is not supported")
        }
        self.value = value
        self.device = device
        self.mtu = options["mtu"]?.uint16Value.map(Int.init)
        self.kind = kind
        self.offset = offset
    }
}
