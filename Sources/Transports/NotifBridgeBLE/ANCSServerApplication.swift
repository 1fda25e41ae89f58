import NotifBridgeANCS
import NotifBridgeDBus

/// The simulated iPhone's ANCS service as bluetoothd reads it over D-Bus. Pure: builds message
/// bodies only. The flags carry no encryption requirement, unlike a real iPhone's, because the
/// emulated controllers in the test VM do not pair.
enum ANCSServerApplication {
    static let application = "/org/notifbridge/ancs"
    static let service = "/org/notifbridge/ancs/service0"
    static let notificationSource = "/org/notifbridge/ancs/service0/char0"
    static let controlPoint = "/org/notifbridge/ancs/service0/char1"
    static let dataSource = "/org/notifbridge/ancs/service0/char2"

    static func managedObjects() -> DBusManagedObjects {
        func characteristic(_ uuid: String, _ flags: [String]) -> [String: DBusProperties] {
            [BlueZ.gattCharacteristic: ["UUID": .string(uuid), "Service": .objectPath(service), "Flags": .stringArray(flags)]]
        }
        return [
            service: [BlueZ.gattService: ["UUID": .string(ANCSUUID.service), "Primary": .bool(true)]],
            notificationSource: characteristic(ANCSUUID.notificationSource, ["notify"]),
            controlPoint: characteristic(ANCSUUID.controlPoint, ["write"]),
            dataSource: characteristic(ANCSUUID.dataSource, ["notify"]),
        ]
    }

    static func path(of characteristic: ANCSGATTServer.Characteristic) -> String {
        switch characteristic {
        case .notificationSource: notificationSource
        case .dataSource: dataSource
        }
    }

    /// `value` as notifications of at most `payload` bytes each, in order.
    static func notifications(_ characteristic: ANCSGATTServer.Characteristic, _ value: [UInt8], payload: Int) -> [DBusSignal] {
        stride(from: 0, to: max(value.count, 1), by: payload).map { start in
            let chunk = Array(value[start..<min(start + payload, value.count)])
            return .propertiesChanged(path: path(of: characteristic), interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(chunk)])
        }
    }

    /// The D-Bus error that makes bluetoothd answer a write with an ATT error. BlueZ 5.66
    /// (src/gatt-database.c, dbus_error_to_att_ecode) sends `org.bluez.Error.Failed` as 0x80 and
    /// has no name for any other application error, so ANCS's 0xA0–0xA3 all reach the
    /// accessory as 0x80; the message keeps the intended code for logs. (Later BlueZ reads a
    /// code from Failed's message, but only 0x80–0x9F, so the message is deliberately not a
    /// bare number.)
    static func refusal(attError: UInt8) -> MethodReply {
        let name = switch attError {
        case 0xA0: "Unknown Command"
        case 0xA1: "Invalid Command"
        case 0xA2: "Invalid Parameter"
        case 0xA3: "Action Failed"
        default: "application error"
        }
        return .error(name: BlueZ.failed, message: "ANCS error 0x\(String(attError, radix: 16, uppercase: true)) (\(name))")
    }
}
