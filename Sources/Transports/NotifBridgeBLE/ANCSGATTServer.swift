import Logging
import NotifBridgeDBus
import Synchronization

/// Simulated-iPhone side: serves the ANCS service from `adapter` and connects, as central, to
/// an accessory advertising the NotifBridge service, so that the accessory's bluetoothd
/// resolves this service over that connection and becomes its GATT client.
public final class ANCSGATTServer: Sendable {
    /// The answer to a Control Point write: accepted, or an ANCS error (0xA0…0xA3). BlueZ 5.66
    /// sends every rejection as ATT error 0x80 (see `ANCSServerApplication.refusal`).
    public enum ControlPointAnswer: Sendable { case accepted, rejected(attError: UInt8) }
    public enum Characteristic: Sendable, Hashable { case notificationSource, dataSource }

    /// StartNotify/StopNotify in the order bluetoothd made them, at most `maxBufferedSubscriptions` unread.
    public let subscriptions: AsyncStream<(Characteristic, subscribed: Bool)>

    public static let maxBufferedSubscriptions = 64
    /// The longest value `notify` takes: a Data Source reply with a few attributes of at most
    /// 65535 bytes each is far shorter in practice; this bounds what one call queues.
    public static let maxNotifyLength = 64 * 1024
    /// Control Point writes answered at once; bluetoothd forwards one write request at a time
    /// per link, so more means something is stuck.
    static let maxPendingWrites = 8

    private struct State {
        var subscribed: Set<Characteristic> = []
        /// From the `mtu` option of bluetoothd's calls; 23 (every link's start) until one says.
        var mtu = CentralArbiter.defaultATTMTU
        var pendingWrites = 0
        var device: String?
    }

    private let bus: DBusConnection
    private let adapterPath: String
    private let logger: Logger
    private let controlPoint: @Sendable ([UInt8]) async -> ControlPointAnswer
    private let state = Mutex(State())
    private let subscriptionSink: AsyncStream<(Characteristic, subscribed: Bool)>.Continuation

    private init(bus: DBusConnection, adapterPath: String, logger: Logger, controlPoint: @escaping @Sendable ([UInt8]) async -> ControlPointAnswer) {
        self.bus = bus
        self.adapterPath = adapterPath
        self.logger = logger
        self.controlPoint = controlPoint
        (subscriptions, subscriptionSink) = AsyncStream.makeStream(of: (Characteristic, subscribed: Bool).self,
                                                                   bufferingPolicy: .bufferingOldest(Self.maxBufferedSubscriptions))
    }

    public static func start(adapter: String, bus address: DBusBusAddress = .system, logger: Logger,
                             controlPoint: @escaping @Sendable ([UInt8]) async -> ControlPointAnswer) async throws -> ANCSGATTServer {
        guard let adapterPath = BlueZ.adapterPath(adapter) else {
            throw BluetoothFailure("\"\(adapter)\" is not an adapter name such as hci1")
        }
        let bus: DBusConnection
        do { bus = try await DBusConnection.connect(to: address) } catch {
            throw BluetoothFailure("cannot reach the system bus", error)
        }
        let server = ANCSGATTServer(bus: bus, adapterPath: adapterPath, logger: logger, controlPoint: controlPoint)
        do {
            try await BlueZClient(bus: bus).setPowered(adapterPath)
            try await bus.exportObject(at: ANCSServerApplication.application) { [weak server] call in
                server?.handle(call) ?? .notHandled
            }
            _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.gattManager, member: "RegisterApplication",
                                   arguments: [.objectPath(ANCSServerApplication.application), .properties([:])])
        } catch let error as DBusError {
            bus.close()
            throw BluetoothFailure("cannot register the ANCS service on \(adapter)", error)
        } catch {
            bus.close()
            throw error
        }
        logger.info("registered the ANCS service on \(adapter)")
        return server
    }

    /// Finds an accessory advertising the NotifBridge service and connects to it.
    public func connect(timeout: Duration) async throws {
        let client = BlueZClient(bus: bus)
        let deadline = ContinuousClock.now + timeout
        let device = try await client.discover(on: adapterPath, until: deadline, restartAfter: .seconds(15), logger: logger)
        try await client.connect(device, until: deadline, logger: logger)
        let mtu = await linkMTU(of: device, client: client)
        state.withLock { state in
            state.device = device
            if let mtu { state.mtu = mtu }
        }
        logger.info("connected to \(BlueZ.address(of: device)); ATT MTU \(mtu.map(String.init) ?? "unknown")")
    }

    /// Connects and waits until the accessory has subscribed to both sources. A link that drops
    /// first, or an accessory that has not subscribed within `grace`, is given up and the device
    /// forgotten (bluetoothd's cached GATT database of it can fail the next connection), then
    /// tried again until `timeout`.
    public func connectAndAwaitSubscriptions(timeout: Duration, grace: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        let client = BlueZClient(bus: bus)
        var attempt = 1
        while true {
            try await connect(timeout: deadline - .now)
            let giveUp = min(deadline, .now + grace)
            while ContinuousClock.now < giveUp {
                let (subscribed, device) = state.withLock { ($0.subscribed, $0.device) }
                if subscribed.isSuperset(of: [.notificationSource, .dataSource]) { return }
                if let device, try await client.managedObjects()[device]?[BlueZ.device]?["Connected"]?.boolValue != true { break }
                try await Task.sleep(for: GATTCentral.pollInterval)
            }
            guard ContinuousClock.now < deadline else {
                throw BluetoothFailure("the accessory did not subscribe to the Notification Source and the Data Source within \(timeout)")
            }
            logger.notice("the accessory has not subscribed after attempt \(attempt); forgetting it and connecting again")
            if let device = state.withLock({ $0.device }) { await client.forget(device, adapterPath: adapterPath, until: deadline) }
            state.withLock { state in
                state.device = nil
                state.subscribed.removeAll()
            }
            attempt += 1
        }
    }

    /// The link's ATT MTU as this side's GATT client reports it on any of the accessory's
    /// characteristics: with one ATT bearer per link, notifications from our server use the
    /// same MTU. nil if bluetoothd does not say (before BlueZ 5.62).
    private func linkMTU(of device: String, client: BlueZClient) async -> Int? {
        guard let objects = try? await client.managedObjects(),
              let characteristic = objects.keys.sorted().first(where: { $0.hasPrefix(device + "/") && objects[$0]?[BlueZ.gattCharacteristic] != nil }),
              let mtu = await client.mtu(of: characteristic), mtu >= CentralArbiter.defaultATTMTU else { return nil }
        return mtu
    }

    /// Notifies `bytes` in notifications of (ATT MTU − 3) bytes each (at most 512), in order.
    public func notify(_ characteristic: Characteristic, _ bytes: [UInt8]) async throws {
        guard bytes.count <= Self.maxNotifyLength else {
            throw BluetoothFailure("\(bytes.count) bytes exceed the \(Self.maxNotifyLength) one notify call takes")
        }
        let (subscribed, mtu) = state.withLock { ($0.subscribed.contains(characteristic), $0.mtu) }
        guard subscribed else { throw BluetoothFailure("the accessory has not subscribed to \(characteristic)") }
        // An attribute value is at most 512 bytes even where the MTU would carry 514.
        for signal in ANCSServerApplication.notifications(characteristic, bytes, payload: min(mtu - 3, ANCSGATT.maxValueLength)) {
            do { try await bus.emit(signal) } catch {
                throw BluetoothFailure("notification failed", error)
            }
        }
    }

    /// Disconnects from the accessory and waits until bluetoothd has.
    public func disconnect() async {
        guard let device = state.withLock({ $0.device }) else { return }
        _ = try? await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Disconnect")
        try? await BlueZClient(bus: bus).waitUntilDisconnected(device, until: .now + BlueZClient.disconnectGrace)
        state.withLock { $0.device = nil }
    }

    public func stop() async {
        _ = try? await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.gattManager, member: "UnregisterApplication",
                                arguments: [.objectPath(ANCSServerApplication.application)])
        subscriptionSink.finish()
        bus.close()
    }

    // MARK: Bus thread

    private func handle(_ call: MethodCall) -> MethodReply {
        switch (call.path, call.interface, call.member) {
        case (ANCSServerApplication.application, BlueZ.objectManager, "GetManagedObjects"):
            return .values([.managedObjects(ANCSServerApplication.managedObjects())])
        case (ANCSServerApplication.notificationSource, BlueZ.gattCharacteristic, let member),
             (ANCSServerApplication.dataSource, BlueZ.gattCharacteristic, let member):
            let characteristic: Characteristic = call.path == ANCSServerApplication.dataSource ? .dataSource : .notificationSource
            guard member == "StartNotify" || member == "StopNotify" else {
                return .error(name: BlueZ.notSupported, message: "ANCS sources only notify")
            }
            let subscribed = member == "StartNotify"
            logger.info("the accessory \(subscribed ? "subscribed to" : "unsubscribed from") \(characteristic)")
            state.withLock { state in
                if subscribed { state.subscribed.insert(characteristic) } else { state.subscribed.remove(characteristic) }
            }
            subscriptionSink.yield((characteristic, subscribed: subscribed))
            return .empty
        case (ANCSServerApplication.controlPoint, BlueZ.gattCharacteristic, "WriteValue"):
            return write(call)
        case (ANCSServerApplication.controlPoint, BlueZ.gattCharacteristic, _):
            return .error(name: BlueZ.notSupported, message: "the Control Point is write-only")
        default:
            return .notHandled
        }
    }

    /// Asks the owner off the bus thread and answers bluetoothd once it has decided.
    private func write(_ call: MethodCall) -> MethodReply {
        guard call.arguments.count == 2, let value = call.arguments[0].bytesValue, let options = try? call.arguments[1].asProperties() else {
            return .invalidArguments("WriteValue takes (ay value, a{sv} options)")
        }
        guard value.count <= ANCSGATT.maxValueLength else {
            return .error(name: BlueZ.invalidValueLength, message: "at most \(ANCSGATT.maxValueLength) bytes")
        }
        guard let reply = call.deferredReply else { return .error(name: BlueZ.failed, message: "no way to answer later") }
        let admitted = state.withLock { state in
            if let mtu = options["mtu"]?.uint16Value, mtu >= CentralArbiter.defaultATTMTU { state.mtu = Int(mtu) }
            guard state.pendingWrites < Self.maxPendingWrites else { return false }
            state.pendingWrites += 1
            return true
        }
        guard admitted else { return .error(name: BlueZ.inProgress, message: "\(Self.maxPendingWrites) Control Point writes are unanswered") }
        let controlPoint = self.controlPoint
        Task { [weak self] in
            let answer = await controlPoint(value)
            self?.state.withLock { $0.pendingWrites -= 1 }
            switch answer {
            case .accepted: reply.send(.empty)
            case .rejected(let attError): reply.send(ANCSServerApplication.refusal(attError: attError))
            }
        }
        return .deferred
    }
}
