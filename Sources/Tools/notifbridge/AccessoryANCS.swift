#if canImport(NotifBridgeBLE)
import Logging
import NotifBridgeAccessory
import NotifBridgeBLE
import NotifBridgeCrypto

/// The BlueZ GATT client of the connected iPhone's ANCS service, as the daemon's ``ANCSPort``.
/// Each event is logged at debug as `ancs <kind> <device> <n> bytes` (the bytes themselves,
/// notification content, only at trace).
struct BlueZANCSPort: ANCSPort {
    let client: ANCSGATTClient
    let events: AsyncStream<ANCSPortEvent>

    init(_ client: ANCSGATTClient, logger: Logger) {
        self.client = client
        // Bounded as the client's own stream is: this copy reads that one as fast as it fills,
        // so without a bound of its own it would undo the client's.
        events = AsyncStream(bufferingPolicy: .bufferingNewest(ANCSGATTClient.maxBufferedEvents)) { continuation in
            let task = Task {
                for await event in client.events {
                    continuation.yield(Self.log(event, logger))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func writeControlPoint(_ bytes: [UInt8], device: String) async throws {
        try await client.writeControlPoint(bytes, device: device)
    }

    private static func log(_ event: ANCSGATTClient.Event, _ logger: Logger) -> ANCSPortEvent {
        let (kind, device, bytes, mapped): (String, String, [UInt8], ANCSPortEvent) = switch event {
        case .ready(let device): ("ready", device, [], .ready(device: device))
        case .notificationSource(let device, let bytes): ("notification-source", device, bytes, .notificationSource(device: device, bytes))
        case .dataSource(let device, let bytes): ("data-source", device, bytes, .dataSource(device: device, bytes))
        case .gone(let device): ("gone", device, [], .gone(device: device))
        }
        logger.debug("ancs \(kind) \(device) \(bytes.count) bytes")
        if !bytes.isEmpty { logger.trace("ancs \(kind) \(device) value \(hexString(bytes))") }
        return mapped
    }
}
#endif
