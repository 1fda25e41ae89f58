#if canImport(NotifBridgeBLE)
import Logging
import NotifBridgeBLE
import NotifBridgeCrypto

/// The accessory's ANCS side until the ANCS pipeline takes it over: each event is logged, at
/// info as `ancs <kind> <device> <n> bytes`, and with its bytes at debug (they are
/// notification content).
func logANCSEvents(_ client: ANCSGATTClient, logger: Logger) async {
    for await event in client.events {
        let (kind, device, bytes): (String, String, [UInt8]) = switch event {
        case .ready(let device): ("ready", device, [])
        case .notificationSource(let device, let bytes): ("notification-source", device, bytes)
        case .dataSource(let device, let bytes): ("data-source", device, bytes)
        case .gone(let device): ("gone", device, [])
        }
        logger.info("ancs \(kind) \(device) \(bytes.count) bytes")
        if !bytes.isEmpty { logger.debug("ancs \(kind) \(device) value \(hexString(bytes))") }
    }
}
#endif
