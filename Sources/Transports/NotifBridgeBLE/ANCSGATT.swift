import NotifBridgeANCS
import NotifBridgeDBus
import NotifBridgeWire

/// The Apple Notification Center Service as BlueZ carries it; the UUIDs are `ANCSUUID`'s.
public enum ANCSGATT {
    /// The longest attribute value ATT carries (Core spec Vol 3 Part F §3.2.9); anything
    /// longer from the bus is refused rather than buffered.
    public static let maxValueLength = WireLimits.maxAttributeValueLength

    /// Which ANCS characteristic a UUID names, if any.
    static func role(ofUUID uuid: String) -> Role? {
        switch uuid.lowercased() {
        case ANCSUUID.notificationSource: .notificationSource
        case ANCSUUID.controlPoint: .controlPoint
        case ANCSUUID.dataSource: .dataSource
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
