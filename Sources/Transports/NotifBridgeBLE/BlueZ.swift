import NotifBridgeDBus

/// BlueZ's D-Bus names (doc/gatt-api.txt, doc/advertising-api.txt, doc/device-api.txt of BlueZ 5.66).
enum BlueZ {
    /// How long each unregistration at a stop may take: the daemon's graceful stop has 15 s in
    /// all, and a hung bluetoothd would otherwise hold each call for sd-bus's 25 s. Closing the
    /// bus connection unregisters what is left anyway.
    static let stopCallTimeout = Duration.seconds(2)

    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let advertisement = "org.bluez.LEAdvertisement1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    /// Error names BlueZ maps to ATT errors for the remote side.
    static let notPermitted = "org.bluez.Error.NotPermitted"
    static let notSupported = "org.bluez.Error.NotSupported"
    static let invalidValueLength = "org.bluez.Error.InvalidValueLength"
    static let failed = "org.bluez.Error.Failed"
    static let inProgress = "org.bluez.Error.InProgress"

    /// Longest adapter name taken from a flag ("hci0" … "hci65535").
    static let maxAdapterNameLength = 16

    /// `/org/bluez/hci0` for `hci0`; nil for anything that is not an adapter name.
    static func adapterPath(_ name: String) -> String? {
        guard name.utf8.count <= maxAdapterNameLength, name.hasPrefix("hci"),
              name.dropFirst(3).allSatisfy(\.isNumber), name.count > 3 else { return nil }
        return "/org/bluez/\(name)"
    }

    /// `hci1` from `/org/bluez/hci1`.
    static func adapterName(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// `00:AA:01:01:00:01` from `/org/bluez/hci0/dev_00_AA_01_01_00_01`.
    static func address(of device: String) -> String {
        guard let last = device.split(separator: "/").last, last.hasPrefix("dev_") else { return device }
        return String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
    }

    /// A match rule for PropertiesChanged signals of `interface` sent by bluetoothd, optionally
    /// for one object.
    static func propertiesChangedRule(interface: String, path: String? = nil) -> String {
        var rule = "type='signal',sender='\(service)',interface='\(properties)',member='PropertiesChanged',arg0='\(interface)'"
        if let path { rule += ",path='\(path)'" }
        return rule
    }
}

/// Something BlueZ (or the bus) would not do, with what was being attempted.
public struct BluetoothFailure: Error, CustomStringConvertible, Sendable {
    public var description: String

    init(_ description: String) {
        self.description = description
    }

    init(_ doing: String, _ error: DBusError) {
        description = "\(doing): \(error)"
    }
}
