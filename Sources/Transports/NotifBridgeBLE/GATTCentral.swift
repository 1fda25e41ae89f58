import Logging
import NotifBridgeDBus
import NotifBridgeWire
import Synchronization

/// The simulated iPhone as a BlueZ GATT central: finds an accessory advertising the NotifBridge
/// service, connects, subscribes to the outbox and returns the connection as a `ChunkLink`,
/// writing chunks no longer than the link's ATT MTU allows.
public enum GATTCentral {
    public struct Options: Sendable {
        /// The local adapter to scan and connect with, e.g. "hci1".
        public var adapter: String
        /// How long discovery, connection and service resolution may take in all.
        public var timeout: Duration
        /// Write without response (write commands) instead of write requests.
        public var withoutResponse: Bool
        /// How long one scan may find nothing before it is stopped and started again.
        public var scanRestart: Duration
        /// How long a connected accessory's characteristics may take to appear in bluetoothd's
        /// objects before its cache of the device is dropped and its services resolved again.
        public var servicesGrace: Duration

        public init(adapter: String, timeout: Duration = .seconds(60), withoutResponse: Bool = false,
                    scanRestart: Duration = .seconds(15), servicesGrace: Duration = .seconds(5)) {
            self.adapter = adapter
            self.timeout = timeout
            self.withoutResponse = withoutResponse
            self.scanRestart = scanRestart
            self.servicesGrace = servicesGrace
        }
    }

    /// How often discovery and connection state are polled.
    static let pollInterval = Duration.milliseconds(250)

    /// An open GATT connection: its link, and a way to wait until it is really gone.
    public struct Connection: Sendable {
        public let link: ChunkLink
        fileprivate let disconnector: Disconnector

        /// Closes the link if it is open and waits until bluetoothd has disconnected. A process
        /// about to exit calls it, or the connection outlives it and blocks the next scan.
        public func disconnect() async {
            await disconnector.run()
        }
    }

    public static func connect(_ options: Options, bus address: DBusBusAddress = .system, logger: Logger) async throws -> Connection {
        guard let adapterPath = BlueZ.adapterPath(options.adapter) else {
            throw BluetoothFailure("\"\(options.adapter)\" is not an adapter name such as hci1")
        }
        let bus: DBusConnection
        do { bus = try await DBusConnection.connect(to: address) } catch {
            throw BluetoothFailure("cannot reach the system bus", error)
        }
        do {
            let deadline = ContinuousClock.now + options.timeout
            let client = BlueZClient(bus: bus)
            try await client.setPowered(adapterPath)
            while true {
                let device = try await client.discover(on: adapterPath, until: deadline, restartAfter: options.scanRestart, logger: logger)
                try await client.connect(device, until: deadline, logger: logger)
                if let (inbox, outbox) = try await client.characteristics(of: device, until: min(deadline, .now + options.servicesGrace)) {
                    return try await link(bus: bus, client: client, device: device, inbox: inbox, outbox: outbox, options: options, logger: logger)
                }
                // bluetoothd dropped the services it had cached (a Service Changed from an
                // accessory that re-registered); a fresh discovery resolves them again.
                await client.forget(device, adapterPath: adapterPath, until: deadline)
                guard ContinuousClock.now < deadline else {
                    throw BluetoothFailure("\(BlueZ.address(of: device)) has no NotifBridge inbox and outbox characteristics, even after resolving its services again")
                }
                logger.notice("\(BlueZ.address(of: device)) showed no NotifBridge characteristics; forgot it and scanning again to resolve its services afresh")
            }
        } catch {
            bus.close()
            throw error
        }
    }

    private static func link(bus: DBusConnection, client: BlueZClient, device: String, inbox: String, outbox: String, options: Options, logger: Logger) async throws -> Connection {
        // Notifications cannot be slowed, and one lost breaks the stream: past this many
        // unread, the link ends instead of growing (the peripheral's own bound on writes).
        let (inbound, continuation) = AsyncThrowingStream.makeStream(of: LinkInbound.self, bufferingPolicy: .bufferingOldest(GATTPeripheral.maxUnreadWrites))
        do {
            try await bus.subscribe(matchRule: BlueZ.propertiesChangedRule(interface: BlueZ.gattCharacteristic, path: outbox)) { signal in
                guard let (_, changed, _) = try? signal.asPropertiesChanged(), let value = changed["Value"]?.bytesValue else { return }
                logger.trace("notified \(value.count) bytes")
                if case .dropped = continuation.yield(.chunk(value)) {
                    continuation.finish(throwing: BluetoothFailure("the accessory notified \(GATTPeripheral.maxUnreadWrites) chunks faster than they were read"))
                }
            }
            try await bus.subscribe(matchRule: BlueZ.propertiesChangedRule(interface: BlueZ.device, path: device)) { signal in
                guard let (_, changed, _) = try? signal.asPropertiesChanged(), changed["Connected"]?.boolValue == false else { return }
                continuation.finish(throwing: BluetoothFailure("the accessory disconnected"))
            }
            _ = try await bus.call(destination: BlueZ.service, path: outbox, interface: BlueZ.gattCharacteristic, member: "StartNotify")
        } catch {
            throw BluetoothFailure("cannot subscribe to the accessory's outbox", error)
        }
        let mtu = await client.mtu(of: inbox) ?? CentralArbiter.defaultATTMTU
        let chunkLength = GATTProfile.chunkLength(forATTMTU: mtu)
        logger.info("connected to \(BlueZ.address(of: device)); ATT MTU \(mtu), chunks of \(chunkLength) bytes")
        let writeType = options.withoutResponse ? "command" : "request"
        let disconnector = Disconnector {
            continuation.finish()
            _ = try? await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Disconnect")
            bus.close()
        }
        let link = ChunkLink(
            peer: "BLE \(BlueZ.address(of: device))",
            kind: .bluetooth,
            chunkLength: chunkLength,
            inbound: inbound,
            write: { chunks in
                for chunk in chunks {
                    guard chunk.count <= chunkLength else {
                        throw BluetoothFailure("a \(chunk.count)-byte chunk exceeds the link's \(chunkLength)-byte ATT payload")
                    }
                    logger.trace("writing \(chunk.count) bytes")
                    do throws(DBusError) {
                        _ = try await bus.call(destination: BlueZ.service, path: inbox, interface: BlueZ.gattCharacteristic, member: "WriteValue",
                                               arguments: [.bytes(chunk), .properties(["type": .string(writeType)])])
                    } catch {
                        throw BluetoothFailure("write to the accessory failed", error)
                    }
                }
            },
            close: { disconnector.start() }
        )
        return Connection(link: link, disconnector: disconnector)
    }
}

/// Runs a disconnect once, however often the link is closed, and lets callers wait for it.
final class Disconnector: Sendable {
    private let work: @Sendable () async -> Void
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ work: @escaping @Sendable () async -> Void) {
        self.work = work
    }

    func start() {
        _ = started()
    }

    func run() async {
        await started().value
    }

    private func started() -> Task<Void, Never> {
        task.withLock { task in
            if let task { return task }
            let started = Task { await work() }
            task = started
            return started
        }
    }
}
