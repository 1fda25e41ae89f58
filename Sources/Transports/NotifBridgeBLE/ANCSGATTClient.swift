import Logging
import NotifBridgeDBus
import NotifBridgeLogGate
import Synchronization

/// Accessory side: the GATT client of the ANCS service of every iPhone connected to `adapter`.
/// The iPhone connects as central; bluetoothd resolves its services over that connection and
/// exports them under `/org/bluez/hciN/dev_XX/serviceNNNN/charNNNN`. For each device whose ANCS
/// service appears, this subscribes to Data Source first, then Notification Source (the
/// spec's order), and reports `.ready`. Moves bytes only; parsing ANCS is the caller's.
public final class ANCSGATTClient: Sendable {
    public enum Event: Sendable, Equatable {
        /// Both subscriptions are in; the device's object path.
        case ready(device: String)
        /// One GATT notification's value.
        case notificationSource(device: String, [UInt8])
        case dataSource(device: String, [UInt8])
        /// Disconnected, or its ANCS service was removed; only after `.ready`.
        case gone(device: String)
    }

    /// Events not yet read, at most `maxBufferedEvents`. GATT notifications cannot be slowed
    /// down (ATT has no flow control for them), so there is no backpressure: a reader that
    /// falls this far behind loses the oldest events, and each loss is logged.
    public let events: AsyncStream<Event>

    public static let maxBufferedEvents = 1024

    /// How long bluetoothd may take for one StartNotify or Control Point write.
    static let callTimeout = Duration.seconds(30)

    private let bus: DBusConnection
    private let adapterPath: String
    private let logger: Logger
    /// Rations the lines about what each device sends, shared with the daemon's other peers.
    private let gate: LogGate
    private let tracker = Mutex(ANCSDeviceTracker())
    private let sink: AsyncStream<Event>.Continuation
    private let requests: AsyncStream<ANCSDeviceTracker.Effect>.Continuation
    private let worker = Mutex<Task<Void, Never>?>(nil)

    private init(bus: DBusConnection, adapterPath: String, gate: LogGate, logger: Logger) {
        self.bus = bus
        self.gate = gate
        self.adapterPath = adapterPath
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(Self.maxBufferedEvents))
        let (stream, requests) = AsyncStream.makeStream(of: ANCSDeviceTracker.Effect.self, bufferingPolicy: .bufferingOldest(ANCSDeviceTracker.maxDevices * 2))
        self.requests = requests
        worker.withLock { $0 = Task { [weak self] in
            for await request in stream {
                guard case .subscribe(let device, let dataSource, let notificationSource, let generation) = request else { continue }
                // One at a time, each up to 30 s: a request the device has outlived is skipped.
                guard self?.tracker.withLock({ $0.isSubscribing(device, generation: generation) }) == true else { continue }
                await self?.subscribe(device, dataSource: dataSource, notificationSource: notificationSource, generation: generation)
            }
        } }
    }

    public static func start(adapter: String, bus address: DBusBusAddress = .system, gate: LogGate = LogGate(LogThrottle()), logger: Logger) async throws -> ANCSGATTClient {
        guard let adapterPath = BlueZ.adapterPath(adapter) else {
            throw BluetoothFailure("\"\(adapter)\" is not an adapter name such as hci0")
        }
        let bus: DBusConnection
        do { bus = try await DBusConnection.connect(to: address) } catch {
            throw BluetoothFailure("cannot reach the system bus for the ANCS client", error)
        }
        let client = ANCSGATTClient(bus: bus, adapterPath: adapterPath, gate: gate, logger: logger)
        do {
            try await client.watch()
        } catch {
            await client.stop()
            throw error
        }
        return client
    }

    /// Subscribes to bluetoothd's signals first, then reads what it already has, so that no
    /// device falls between the two (one seen twice is harmless).
    private func watch() async throws {
        do {
            try await bus.subscribe(matchRule: BlueZ.objectManagerRule("InterfacesAdded")) { [weak self] signal in
                guard let self, signal.arguments.count == 2, let path = signal.arguments[0].stringValue,
                      let interfaces = try? signal.arguments[1].asInterfaces() else { return }
                self.apply { self.added(path, interfaces, to: &$0) }
            }
            try await bus.subscribe(matchRule: BlueZ.objectManagerRule("InterfacesRemoved")) { [weak self] signal in
                guard let path = signal.arguments.first?.stringValue else { return }
                self?.apply { $0.removed(path: path) }
            }
            try await bus.subscribe(matchRule: BlueZ.propertiesChangedRule(interface: BlueZ.device, below: adapterPath)) { [weak self] signal in
                guard let (_, changed, _) = try? signal.asPropertiesChanged() else { return }
                self?.apply { $0.deviceChanged(signal.path, connected: changed["Connected"]?.boolValue, servicesResolved: changed["ServicesResolved"]?.boolValue) }
            }
            try await bus.subscribe(matchRule: BlueZ.propertiesChangedRule(interface: BlueZ.gattCharacteristic, below: adapterPath)) { [weak self] signal in
                guard let value = try? signal.asPropertiesChanged().changed["Value"]?.bytesValue else { return }
                self?.apply { $0.value(path: signal.path, bytes: value) }
            }
            try await bus.subscribe(matchRule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(BlueZ.service)'") { [weak self] signal in
                guard signal.arguments.count == 3, signal.arguments[2].stringValue == "" else { return }
                self?.logger.error("bluetoothd left the bus; every ANCS subscription is gone")
                self?.apply { $0.bluetoothdGone() }
            }
        } catch {
            throw BluetoothFailure("cannot watch bluetoothd's objects", error)
        }
        let objects = try await BlueZClient(bus: bus).managedObjects()
        apply { tracker in
            objects.keys.sorted().flatMap { self.added($0, objects[$0] ?? [:], to: &tracker) }
        }
    }

    private func added(_ path: String, _ interfaces: [String: DBusProperties], to tracker: inout ANCSDeviceTracker) -> [ANCSDeviceTracker.Effect] {
        guard let device = BlueZ.device(of: path, under: adapterPath) else { return [] }
        if let properties = interfaces[BlueZ.device] {
            return tracker.deviceChanged(path, connected: properties["Connected"]?.boolValue, servicesResolved: properties["ServicesResolved"]?.boolValue)
        }
        guard let uuid = interfaces[BlueZ.gattCharacteristic]?["UUID"]?.stringValue else { return [] }
        return tracker.characteristicAdded(path: path, uuid: uuid, device: device)
    }

    /// Updates the tracker and carries out its effects under one lock, so events keep the
    /// order in which bluetoothd reported them whichever thread reports.
    private func apply(_ body: (inout ANCSDeviceTracker) -> [ANCSDeviceTracker.Effect]) {
        tracker.withLock { tracker in
            for effect in body(&tracker) {
                switch effect {
                case .subscribe(let device, _, _, let generation):
                    logger.info("ANCS service found on \(BlueZ.address(of: device)); subscribing to Data Source, then Notification Source")
                    // A full queue must not leave the device waiting for a subscription that never
                    // comes: it is tried again when bluetoothd next reports it.
                    if case .dropped = requests.yield(effect) {
                        tracker.subscribeFailed(device, generation: generation)
                        let address = BlueZ.address(of: device)
                        gate.pass(address) { logger.notice("ANCS subscriptions are queued for \(ANCSDeviceTracker.maxDevices * 2) devices; \(address) waits") }
                    }
                case .emit(let event):
                    if case .dropped = sink.yield(event) {
                        logger.warning("dropped the oldest unread ANCS event: \(Self.maxBufferedEvents) events wait unread")
                    }
                case .dropped(let device, let why):
                    let address = BlueZ.address(of: device)
                    gate.pass(address) { logger.notice("ignored an ANCS value from \(address): \(why)") }
                }
            }
        }
    }

    private func subscribe(_ device: String, dataSource: String, notificationSource: String, generation: Int) async {
        var subscribed: [String] = []
        do {
            for characteristic in [dataSource, notificationSource] {
                do throws(DBusError) {
                    _ = try await bus.call(destination: BlueZ.service, path: characteristic, interface: BlueZ.gattCharacteristic,
                                           member: "StartNotify", timeout: Self.callTimeout)
                } catch {
                    let which = characteristic == dataSource ? "Data Source" : "Notification Source"
                    throw BluetoothFailure("cannot subscribe to \(which) of \(BlueZ.address(of: device))", error)
                }
                subscribed.append(characteristic)
            }
            apply { $0.subscribed(device, generation: generation) }
        } catch {
            let address = BlueZ.address(of: device)
            gate.pass(address) { logger.error("\(error)") }
            tracker.withLock { $0.subscribeFailed(device, generation: generation) }
            // Half a subscription is none: bluetoothd would go on passing the device's Data
            // Source values, each dropped, for as long as it stays connected.
            for characteristic in subscribed {
                _ = try? await bus.call(destination: BlueZ.service, path: characteristic, interface: BlueZ.gattCharacteristic,
                                        member: "StopNotify", timeout: Self.callTimeout)
            }
        }
    }

    /// Writes a request to the device's Control Point (ATT Write Request) and returns once the
    /// iPhone acknowledged it. A refusal carries BlueZ's error name and the ATT error.
    public func writeControlPoint(_ bytes: [UInt8], device: String) async throws {
        guard bytes.count <= ANCSGATT.maxValueLength else {
            throw BluetoothFailure("a Control Point write is at most \(ANCSGATT.maxValueLength) bytes; this one has \(bytes.count)")
        }
        guard let path = tracker.withLock({ $0.controlPoint(of: device) }) else {
            throw BluetoothFailure("\(BlueZ.address(of: device)) has no ready ANCS service")
        }
        do throws(DBusError) {
            _ = try await bus.call(destination: BlueZ.service, path: path, interface: BlueZ.gattCharacteristic, member: "WriteValue",
                                   arguments: [.bytes(bytes), .properties(["type": .string("request")])], timeout: Self.callTimeout)
        } catch {
            throw ControlPointFailure(device: device, error: error)
        }
    }

    /// Calls `handler` once if the client's bus connection is lost (not at ``stop()``): no
    /// ANCS value or device change reaches it after that, and its subscriptions are gone.
    public func onBusLoss(_ handler: @escaping DBusLossHandler) {
        bus.onLoss(handler)
    }

    /// Ends the subscriptions (bluetoothd drops them with this client's bus connection) and
    /// the event stream.
    public func stop() async {
        requests.finish()
        sink.finish()
        let task = worker.withLock { $0 }
        task?.cancel()
        bus.close()
        await task?.value
    }
}
