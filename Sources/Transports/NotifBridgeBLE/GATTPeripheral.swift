import Logging
import NotifBridgeDBus
import NotifBridgeLogGate
import NotifBridgeWire
import Synchronization

/// The accessory as a BlueZ GATT peripheral: registers the NotifBridge service and its
/// advertisement with bluetoothd on one adapter, and hands each central that writes to the
/// inbox over as a `ChunkLink`, which the daemon serves like a TCP connection.
public final class GATTPeripheral: Sendable {
    public let adapter: String
    public let name: String
    /// One link per central, in the order they connect; finishes when the peripheral stops.
    public let links: AsyncStream<ChunkLink>

    private let bus: DBusConnection
    private let adapterPath: String
    private let logger: Logger
    /// Rations the lines about what centrals do, shared with the daemon's other peers.
    private let gate: LogGate
    private let state: Mutex<State>
    private let linkSink: AsyncStream<ChunkLink>.Continuation
    private let resubscribeGrace: Duration

    /// How long a notification waits for a central that unsubscribed to subscribe again
    /// before the link is given up. iOS resubscribes within a second or two after a
    /// reconnect; an emulated controller can take several.
    public static let defaultResubscribeGrace = Duration.seconds(20)

    /// Writes a link may have waiting unread. Past this, a write is refused with
    /// `org.bluez.Error.InProgress`: with write requests the central hears that and its link
    /// fails; a write command is lost, and the event it belonged to goes again unacknowledged.
    /// Memory stays bounded however fast a central writes (at most 512 × 512 bytes per link).
    public static let maxUnreadWrites = 512

    private struct State {
        var arbiter = CentralArbiter()
        /// The open link's inbound stream, and a number that tells its writes from a later link's.
        var inbound: AsyncThrowingStream<LinkInbound, any Error>.Continuation?
        var generation = 0
        /// The link stream was ended by ``GATTPeripheral/end(because:)``.
        var ended = false
    }

    private init(bus: DBusConnection, adapter: String, adapterPath: String, name: String, resubscribeGrace: Duration, gate: LogGate, logger: Logger) {
        self.bus = bus
        self.gate = gate
        self.resubscribeGrace = resubscribeGrace
        self.adapter = adapter
        self.adapterPath = adapterPath
        self.name = name
        self.logger = logger
        state = Mutex(State())
        (links, linkSink) = AsyncStream.makeStream(of: ChunkLink.self)
    }

    /// Connects to the system bus, exports the application and registers it and the
    /// advertisement on `adapter` (e.g. "hci0").
    public static func start(
        adapter: String,
        name: String = GATTProfile.advertisedName,
        bus address: DBusBusAddress = .system,
        resubscribeGrace: Duration = defaultResubscribeGrace,
        gate: LogGate = LogGate(LogThrottle()),
        logger: Logger
    ) async throws -> GATTPeripheral {
        guard let adapterPath = BlueZ.adapterPath(adapter) else {
            throw BluetoothFailure("\"\(adapter)\" is not an adapter name such as hci0")
        }
        let bus: DBusConnection
        do { bus = try await DBusConnection.connect(to: address) } catch {
            throw BluetoothFailure("cannot reach the system bus (is dbus running, and may this user talk to bluetoothd?)", error)
        }
        let peripheral = GATTPeripheral(bus: bus, adapter: adapter, adapterPath: adapterPath, name: name, resubscribeGrace: resubscribeGrace, gate: gate, logger: logger)
        do {
            try await peripheral.register()
        } catch {
            bus.close()
            throw error
        }
        return peripheral
    }

    private func register() async throws {
        try await setPowered()
        do {
            try await bus.exportObject(at: GATTApplication.root) { [weak self] call in
                self?.handle(call) ?? .notHandled
            }
            try await bus.subscribe(matchRule: BlueZ.propertiesChangedRule(interface: BlueZ.device)) { [weak self] signal in
                self?.deviceChanged(signal)
            }
            // bluetoothd going away takes the application and advertisement with it, and so
            // does losing the bus: no call, write or disconnect would reach us again.
            try await bus.subscribe(matchRule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(BlueZ.service)'") { [weak self] signal in
                guard signal.arguments.count == 3, signal.arguments[2].stringValue == "" else { return }
                self?.end(because: "bluetoothd left the bus")
            }
            bus.onLoss { [weak self] error in self?.end(because: "the system bus connection was lost (\(error))") }
        } catch {
            throw BluetoothFailure("cannot export the GATT application", error)
        }
        // bluetoothd reads the application back (GetManagedObjects) before it answers; the
        // bus thread serves that while this call waits.
        try await callAdapter(BlueZ.gattManager, "RegisterApplication", [.objectPath(GATTApplication.application), .properties([:])])
        try await callAdapter(BlueZ.advertisingManager, "RegisterAdvertisement", [.objectPath(GATTApplication.advertisement), .properties([:])])
        logger.info("registered the NotifBridge GATT service and advertisement on \(adapter)")
    }

    private func setPowered() async throws {
        do {
            _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.properties, member: "Set",
                                   arguments: [.string(BlueZ.adapter), .string("Powered"), .variant(.bool(true))])
        } catch {
            throw BluetoothFailure("cannot power on \(adapter) (does it exist? see `bluetoothctl list`)", error)
        }
    }

    private func callAdapter(_ interface: String, _ member: String, _ arguments: [DBusValue]) async throws {
        do {
            _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: interface, member: member, arguments: arguments)
        } catch {
            throw BluetoothFailure("\(member) on \(adapter) failed", error)
        }
    }

    /// Withdraws the advertisement and the application, ends the open link and the link stream.
    /// Closing the bus connection withdraws both anyway, should bluetoothd not answer in time.
    public func stop() async {
        for (interface, member, path) in [
            (BlueZ.advertisingManager, "UnregisterAdvertisement", GATTApplication.advertisement),
            (BlueZ.gattManager, "UnregisterApplication", GATTApplication.application),
        ] {
            _ = try? await bus.call(
                destination: BlueZ.service, path: adapterPath, interface: interface, member: member, arguments: [.objectPath(path)], timeout: BlueZ.stopCallTimeout
            )
        }
        state.withLock { state in
            state.inbound?.finish()
            state.inbound = nil
        }
        linkSink.finish()
        bus.close()
    }

    // MARK: Bus thread

    /// Serves bluetoothd's calls. Runs on the bus thread, so it only updates state and queues.
    private func handle(_ call: MethodCall) -> MethodReply {
        switch (call.path, call.interface, call.member) {
        case (GATTApplication.application, BlueZ.objectManager, "GetManagedObjects"):
            return .values([.managedObjects(GATTApplication.managedObjects())])
        case (GATTApplication.advertisement, BlueZ.properties, "GetAll"):
            return .values([.properties(GATTApplication.advertisementProperties(name: name))])
        case (GATTApplication.advertisement, BlueZ.properties, "Get"):
            guard let key = call.arguments.last?.stringValue, let value = GATTApplication.advertisementProperties(name: name)[key] else {
                return .invalidArguments("no such advertisement property")
            }
            return .values([.variant(value)])
        case (GATTApplication.advertisement, BlueZ.advertisement, "Release"):
            logger.notice("bluetoothd released the advertisement on \(adapter)")
            return .empty
        case (GATTApplication.inbox, BlueZ.gattCharacteristic, "WriteValue"):
            return write(call.arguments)
        case (GATTApplication.outbox, BlueZ.gattCharacteristic, "StartNotify"):
            logger.info("a central subscribed to the outbox")
            state.withLock { $0.arbiter.startNotify() }
            return .empty
        case (GATTApplication.outbox, BlueZ.gattCharacteristic, "StopNotify"):
            logger.info("the outbox has no subscriber now")
            state.withLock { $0.arbiter.stopNotify() }
            return .empty
        case (GATTApplication.inbox, BlueZ.gattCharacteristic, "ReadValue"), (GATTApplication.outbox, BlueZ.gattCharacteristic, "ReadValue"):
            return .error(name: BlueZ.notSupported, message: "NotifBridge characteristics are not readable")
        default:
            return .notHandled
        }
    }

    private func write(_ arguments: [DBusValue]) -> MethodReply {
        let write: InboxWrite
        do throws(InboxWrite.Refusal) { write = try InboxWrite(arguments: arguments) } catch { return refused(error, from: nil) }
        logger.trace("inbox write of \(write.value.count) bytes (\(write.kind.rawValue), MTU \(write.mtu.map(String.init) ?? "?"))")
        let effects: [CentralArbiter.Effect]
        do throws(InboxWrite.Refusal) {
            effects = try state.withLock { state throws(InboxWrite.Refusal) in
                // No link opened now would reach the daemon, which is stopping.
                guard !state.ended else { throw InboxWrite.Refusal(name: BlueZ.failed, message: "the accessory is stopping") }
                return try state.arbiter.write(write)
            }
        } catch {
            return refused(error, from: write.device)
        }
        guard apply(effects) else {
            return refused(.init(name: BlueZ.inProgress, message: "the accessory has \(Self.maxUnreadWrites) writes unread; write again later"), from: write.device)
        }
        return .empty
    }

    /// A refusal's log line is rationed per central: one that writes in a loop, or a second
    /// central while the first holds the link, would otherwise write a line per write.
    private func refused(_ refusal: InboxWrite.Refusal, from device: String?) -> MethodReply {
        gate.pass(device.map { BlueZ.address(of: $0) } ?? "a central bluetoothd did not name") {
            logger.notice("refused a write\(device.map { " from \(BlueZ.address(of: $0))" } ?? ""): \(refusal.message)")
        }
        return .error(name: refusal.name, message: refusal.message)
    }

    /// Ends the open link and the link stream, so the daemon stops serving Bluetooth and exits
    /// (a supervisor starts it again once bluetoothd, or the bus, is back). Also for what goes
    /// wrong beside the peripheral that only a restart mends, such as the pairing agent's bus.
    public func end(because reason: String) {
        let first = state.withLock { state in
            state.inbound?.finish(throwing: BluetoothFailure(reason))
            state.inbound = nil
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        logger.error("\(reason); the GATT service and advertisement are gone")
        linkSink.finish()
    }

    private func deviceChanged(_ signal: DBusSignal) {
        guard signal.path.hasPrefix(adapterPath + "/"),
              let (_, changed, _) = try? signal.asPropertiesChanged(),
              changed["Connected"]?.boolValue == false else { return }
        apply(state.withLock { $0.arbiter.disconnected(device: signal.path) })
    }

    /// Carries out the arbiter's effects; false if a chunk was refused because the link's
    /// reader is `maxUnreadWrites` behind.
    @discardableResult
    private func apply(_ effects: [CentralArbiter.Effect]) -> Bool {
        var taken = true
        for effect in effects {
            switch effect {
            case .open(let device, let chunkLength):
                let (inbound, continuation) = AsyncThrowingStream.makeStream(of: LinkInbound.self, bufferingPolicy: .bufferingOldest(Self.maxUnreadWrites))
                // Checked again here: `end(because:)` may run on another part's bus thread
                // between the write's check and this, and a link it never ends would keep the
                // stopping daemon waiting.
                let generation: Int? = state.withLock { state in
                    guard !state.ended else { return nil }
                    state.inbound?.finish()
                    state.inbound = continuation
                    state.generation += 1
                    return state.generation
                }
                guard let generation else {
                    continuation.finish(throwing: BluetoothFailure("the accessory is stopping"))
                    continue
                }
                logger.info("central \(BlueZ.address(of: device)) connected; chunks of \(chunkLength) bytes")
                linkSink.yield(ChunkLink(
                    peer: "BLE \(BlueZ.address(of: device))",
                    kind: .bluetooth,
                    chunkLength: chunkLength,
                    inbound: inbound,
                    write: { [weak self] chunks in try await self?.notify(chunks, generation: generation) },
                    close: { [weak self] in self?.disconnect(device, generation: generation) }
                ))
            case .chunk(let bytes):
                if case .dropped = state.withLock({ $0.inbound?.yield(.chunk(bytes)) }) { taken = false }
            case .chunkLength(let length):
                _ = state.withLock { $0.inbound?.yield(.chunkLength(length)) }
            case .close(let device, let reason):
                logger.info("central \(BlueZ.address(of: device)) gone: \(reason)")
                state.withLock { state in
                    state.inbound?.finish()
                    state.inbound = nil
                }
            }
        }
        return taken
    }

    // MARK: Outbound

    /// Notifies chunks to the subscribed central, one PropertiesChanged each. A chunk longer
    /// than the link's ATT MTU allows is never written. While bluetoothd reports no subscriber,
    /// it waits up to `resubscribeGrace` for one.
    private func notify(_ chunks: [[UInt8]], generation: Int) async throws {
        for chunk in chunks {
            try await waitForSubscriber(generation: generation)
            try state.withLock { state throws(BluetoothFailure) in
                guard chunk.count <= state.arbiter.chunkLength else {
                    throw BluetoothFailure("a \(chunk.count)-byte chunk exceeds the link's \(state.arbiter.chunkLength)-byte ATT payload")
                }
            }
            logger.trace("notifying \(chunk.count) bytes")
            do { try await bus.emit(GATTApplication.notification(chunk)) } catch {
                throw BluetoothFailure("notification failed", error)
            }
        }
    }

    /// Returns once the link may notify; throws when it ended or nobody subscribed in time.
    private func waitForSubscriber(generation: Int) async throws {
        let deadline = ContinuousClock.now + resubscribeGrace
        var waited = false
        while true {
            let ready = try state.withLock { state throws(BluetoothFailure) in
                guard state.generation == generation, state.inbound != nil else { throw BluetoothFailure("the central is gone") }
                return state.arbiter.mayNotify
            }
            if ready {
                if waited { logger.info("the central subscribed to the outbox again") }
                return
            }
            guard ContinuousClock.now < deadline else {
                throw BluetoothFailure("the central unsubscribed from the outbox and did not subscribe again within \(resubscribeGrace)")
            }
            if !waited { logger.info("waiting up to \(resubscribeGrace) for the central to subscribe to the outbox") }
            waited = true
            try await Task.sleep(for: Self.subscriberPoll)
        }
    }

    /// How often a waiting notification checks the subscription; short next to a link's pace.
    private static let subscriberPoll = Duration.milliseconds(20)

    /// Ends a link from the accessory's side by disconnecting the central.
    /// Ends a link the daemon is done with: its stream, and the central's connection. Only while
    /// that link is the open one: a link that ended because its central left (and maybe came
    /// back, under the same device path) has nothing to disconnect, and a second close is none.
    private func disconnect(_ device: String, generation: Int) {
        let current = state.withLock { state in
            guard state.generation == generation, let inbound = state.inbound else { return false }
            inbound.finish()
            state.inbound = nil
            return true
        }
        guard current else { return }
        let bus = self.bus
        Task {
            _ = try? await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Disconnect")
        }
    }
}
