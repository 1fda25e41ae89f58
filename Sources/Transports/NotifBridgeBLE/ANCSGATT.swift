import NotifBridgeDBus

/// The Apple Notification Center Service's GATT identifiers (Apple's ANCS specification).
/// Lower case, as bluetoothd reports UUIDs.
public enum ANCSGATT {
    public static let serviceUUID = "7905f431-b5ce-4e99-a40f-4b1e122d00d0"
    /// Notify: one 8-byte event per notification added, modified or removed.
    public static let notificationSourceUUID = "9fbf120d-6301-42d9-8c58-25e699a21dbd"
    /// Write with response: attribute requests and actions.
    public static let controlPointUUID = "69d1d8f3-45e1-49a8-9821-9bbdfdaad9d9"
    /// Notify: replies to Control Point requests, possibly spanning many notifications.
    public static let dataSourceUUID = "22eac6e9-24d6-4bb5-be44-b36ace7c7bfb"

    /// The longest attribute value ATT carries (Core spec Vol 3 Part F §3.2.9); anything
    /// longer from the bus is refused rather than buffered.
    public static let maxValueLength = 512

    /// Which ANCS characteristic a UUID names, if any.
    static func role(ofUUID uuid: String) -> Role? {
        switch uuid.lowercased() {
        case notificationSourceUUID: .notificationSource
        case controlPointUUID: .controlPoint
        case dataSourceUUID: .dataSource
        default: nil
        }
    }

    enum Role: Sendable, Hashable {
        case notificationSource, controlPoint, dataSource
    }
}

extension BlueZ {
    /// `/org/bluez/hci0/dev_XX` for any object at or below a device under `adapterPath`.
    static func device(of path: String, under adapterPath: String) -> String? {
        guard path.hasPrefix(adapterPath + "/") else { return nil }
        let rest = path.dropFirst(adapterPath.count + 1)
        guard let name = rest.split(separator: "/").first, name.hasPrefix("dev_") else { return nil }
        return adapterPath + "/" + name
    }

    /// PropertiesChanged of `interface` from bluetoothd for every object below `adapterPath`.
    static func propertiesChangedRule(interface: String, below adapterPath: String) -> String {
        propertiesChangedRule(interface: interface) + ",path_namespace='\(adapterPath)'"
    }

    /// ObjectManager's InterfacesAdded or InterfacesRemoved from bluetoothd.
    static func objectManagerRule(_ member: String) -> String {
        "type='signal',sender='\(service)',interface='\(objectManager)',member='\(member)'"
    }

    static let notAuthorized = "org.bluez.Error.NotAuthorized"
}
