import Logging
import NotifBridgeDBus
import NotifBridgeWire

/// The calls a central makes to bluetoothd, each with a clear failure.
struct BlueZClient: Sendable {
    let bus: DBusConnection

    func setPowered(_ adapterPath: String) async throws {
        do {
            _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.properties, member: "Set",
                                   arguments: [.string(BlueZ.adapter), .string("Powered"), .variant(.bool(true))])
        } catch {
            throw BluetoothFailure("cannot power on \(adapterPath)", error)
        }
    }

    func managedObjects() async throws -> DBusManagedObjects {
        do throws(DBusError) {
            let reply = try await bus.call(destination: BlueZ.service, path: "/", interface: BlueZ.objectManager, member: "GetManagedObjects")
            return try (reply.first ?? .managedObjects([:])).asManagedObjects()
        } catch {
            throw BluetoothFailure("cannot list bluetoothd's objects", error)
        }
    }

    /// Scans with a filter for the NotifBridge service until a device under `adapterPath`
    /// advertises it. A scan that has found nothing for `restartAfter` is stopped and started
    /// again: a controller whose scan enable was lost (an HCI command timing out) scans again.
    func discover(on adapterPath: String, until deadline: ContinuousClock.Instant, restartAfter: Duration, logger: Logger) async throws -> String {
        let adapter = BlueZ.adapterName(of: adapterPath)
        do {
            _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "SetDiscoveryFilter",
                                   arguments: [.properties(["UUIDs": .stringArray([GATTProfile.serviceUUID.lowercased()]), "Transport": .string("le")])])
        } catch {
            throw BluetoothFailure("cannot scan on \(adapter)", error)
        }
        defer {
            let bus = self.bus
            Task { _ = try? await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StopDiscovery") }
        }
        let started = ContinuousClock.now
        var scans = 0
        while ContinuousClock.now < deadline {
            if scans > 0 {
                logger.notice("no NotifBridge accessory seen on \(adapter) yet; restarting the scan")
                _ = try? await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StopDiscovery")
            }
            do {
                _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StartDiscovery")
            } catch {
                throw BluetoothFailure("cannot scan on \(adapter)", error)
            }
            scans += 1
            logger.info("scanning on \(adapter) for the NotifBridge service")
            let scanEnd = min(deadline, .now + restartAfter)
            while ContinuousClock.now < scanEnd {
                if let device = Self.advertiser(in: try await managedObjects(), under: adapterPath) { return device }
                try await Task.sleep(for: GATTCentral.pollInterval)
            }
        }
        let seconds = (ContinuousClock.now - started).components.seconds
        throw BluetoothFailure("""
            no accessory advertising the NotifBridge service (\(GATTProfile.serviceUUID)) or named "\(GATTProfile.advertisedName)" \
            was seen on \(adapter) in \(seconds) s (\(scans) scan\(scans == 1 ? "" : "s")); is it running, advertising and in range?
            """)
    }

    /// The first device under the adapter that advertises the service. bluetoothd stops
    /// taking a known device's UUIDs from advertisements once it has resolved its GATT
    /// services, and forgets them when those services go away; such a device, seen in this
    /// scan (it has an RSSI) under the NotifBridge name, counts too.
    static func advertiser(in objects: DBusManagedObjects, under adapterPath: String) -> String? {
        let service = GATTProfile.serviceUUID.lowercased()
        let devices = objects.keys.sorted().compactMap { path -> (String, DBusProperties)? in
            guard path.hasPrefix(adapterPath + "/"), let device = objects[path]?[BlueZ.device] else { return nil }
            return (path, device)
        }
        if let (path, _) = devices.first(where: { $0.1["UUIDs"]?.stringArrayValue?.contains { $0.lowercased() == service } == true }) {
            return path
        }
        return devices.first { _, device in
            device["RSSI"] != nil && (device["Name"]?.stringValue ?? device["Alias"]?.stringValue ?? "").hasPrefix(GATTProfile.advertisedName)
        }?.0
    }

    /// How long a link this adapter just closed may take to go down before connecting again.
    static let disconnectGrace = Duration.seconds(10)

    func connect(_ device: String, until deadline: ContinuousClock.Instant, logger: Logger) async throws {
        // A link closed a moment ago (a reconnect) may still be going down; a Connect now
        // would join it and then lose it.
        try await waitUntilDisconnected(device, until: min(deadline, .now + Self.disconnectGrace))
        do {
            _ = try await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Connect", timeout: .seconds(30))
        } catch {
            throw BluetoothFailure("cannot connect to \(BlueZ.address(of: device))", error)
        }
        while ContinuousClock.now < deadline {
            if try await managedObjects()[device]?[BlueZ.device]?["ServicesResolved"]?.boolValue == true { return }
            try await Task.sleep(for: GATTCentral.pollInterval)
        }
        throw BluetoothFailure("the accessory's services were not resolved in time")
    }

    func waitUntilDisconnected(_ device: String, until deadline: ContinuousClock.Instant) async throws {
        while try await managedObjects()[device]?[BlueZ.device]?["Connected"]?.boolValue == true {
            guard ContinuousClock.now < deadline else {
                throw BluetoothFailure("\(BlueZ.address(of: device)) is still connected to this adapter; another program may hold the link")
            }
            try await Task.sleep(for: GATTCentral.pollInterval)
        }
    }

    /// Disconnects and removes the device with everything bluetoothd cached of it, so that the
    /// next connection discovers its services afresh. Best effort: either may already be gone.
    func forget(_ device: String, adapterPath: String, until deadline: ContinuousClock.Instant) async {
        _ = try? await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Disconnect")
        try? await waitUntilDisconnected(device, until: min(deadline, .now + Self.disconnectGrace))
        _ = try? await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "RemoveDevice", arguments: [.objectPath(device)])
    }

    /// The device's NotifBridge characteristics once bluetoothd exports them; nil when they
    /// are still missing at `deadline` (its cache of the device lost them).
    func characteristics(of device: String, until deadline: ContinuousClock.Instant) async throws -> (inbox: String, outbox: String)? {
        while true {
            if let found = Self.characteristics(in: try await managedObjects(), of: device) { return found }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: GATTCentral.pollInterval)
        }
    }

    static func characteristics(in objects: DBusManagedObjects, of device: String) -> (inbox: String, outbox: String)? {
        var inbox: String?
        var outbox: String?
        for (path, interfaces) in objects where path.hasPrefix(device + "/") {
            guard let uuid = interfaces[BlueZ.gattCharacteristic]?["UUID"]?.stringValue?.lowercased() else { continue }
            if uuid == GATTProfile.inboxCharacteristicUUID.lowercased() { inbox = path }
            if uuid == GATTProfile.outboxCharacteristicUUID.lowercased() { outbox = path }
        }
        guard let inbox, let outbox else { return nil }
        return (inbox, outbox)
    }

    /// The characteristic's ATT MTU (BlueZ 5.62 and later), or nil if it is not reported.
    func mtu(of characteristic: String) async -> Int? {
        let reply = try? await bus.call(destination: BlueZ.service, path: characteristic, interface: BlueZ.properties, member: "Get",
                                        arguments: [.string(BlueZ.gattCharacteristic), .string("MTU")])
        return reply?.first?.variantContents?.uint16Value.map(Int.init)
    }
}
