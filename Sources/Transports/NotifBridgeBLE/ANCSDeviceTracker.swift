/// What bluetoothd has said about the ANCS service of each device on one adapter, and what the
/// client does about it: subscribe once a connected device exports all three characteristics,
/// pass values on once it is ready, and report it gone. Pure: events in, effects out.
struct ANCSDeviceTracker: Sendable {
    typealias Event = ANCSGATTClient.Event

    enum Effect: Equatable, Sendable {
        /// StartNotify on Data Source, then Notification Source; report back with `generation`.
        case subscribe(device: String, dataSource: String, notificationSource: String, generation: Int)
        case emit(Event)
        /// A value dropped, with why (for the log, rationed per device).
        case dropped(device: String, String)
    }

    enum Phase: Equatable, Sendable {
        case idle, subscribing, ready
    }

    struct Device: Sendable {
        var characteristics: [ANCSGATT.Role: String] = [:]
        var connected = true
        var phase = Phase.idle
        /// Tells a finished subscription from one started after the device went and came back.
        var generation = 0
        /// Values notified between the Notification Source subscription and `.ready`.
        var early: [Event] = []
    }

    /// Devices with ANCS characteristics tracked at once; a further one is ignored (logged).
    static let maxDevices = 32
    /// Values held while a device's subscriptions complete; the phone sends nothing unasked
    /// but Notification Source events, so a handful suffices.
    static let maxEarlyValues = 64

    private(set) var devices: [String: Device] = [:]
    /// Characteristic paths followed, for tests: at most three a device.
    var trackedPaths: Int { roles.count }
    private var roles: [String: (device: String, role: ANCSGATT.Role)] = [:]

    mutating func characteristicAdded(path: String, uuid: String, device: String) -> [Effect] {
        guard let role = ANCSGATT.role(ofUUID: uuid) else { return [] }
        guard devices[device] != nil || devices.count < Self.maxDevices else {
            return [.dropped(device: device, "already tracking \(Self.maxDevices) devices")]
        }
        // One path per role and device: a device that exports a role again replaces it, so the
        // paths tracked stay three a device however many it exports.
        if let replaced = devices[device]?.characteristics[role], replaced != path { roles[replaced] = nil }
        roles[path] = (device, role)
        devices[device, default: Device()].characteristics[role] = path
        return subscribeIfComplete(device)
    }

    /// An object bluetoothd removed: a characteristic, its service or the whole device.
    mutating func removed(path: String) -> [Effect] {
        let gone = roles.keys.filter { $0 == path || $0.hasPrefix(path + "/") }
        var effects: [Effect] = []
        for characteristic in gone {
            guard let (device, role) = roles.removeValue(forKey: characteristic) else { continue }
            devices[device]?.characteristics[role] = nil
            effects += end(device)
        }
        if devices[path] != nil {
            effects += end(path)
            devices[path] = nil
        }
        for (device, state) in devices where state.characteristics.isEmpty && state.phase == .idle {
            devices[device] = nil
        }
        return effects
    }

    mutating func deviceChanged(_ device: String, connected: Bool?, servicesResolved: Bool?) -> [Effect] {
        guard devices[device] != nil else { return [] }
        if connected == false {
            devices[device]?.connected = false
            return end(device)
        }
        if connected == true || servicesResolved == true { devices[device]?.connected = true }
        return subscribeIfComplete(device)
    }

    mutating func value(path: String, bytes: [UInt8]) -> [Effect] {
        guard let (device, role) = roles[path], role != .controlPoint, let state = devices[device] else { return [] }
        guard bytes.count <= ANCSGATT.maxValueLength else {
            return [.dropped(device: device, "a \(bytes.count)-byte value exceeds \(ANCSGATT.maxValueLength) bytes")]
        }
        let event: Event = role == .notificationSource ? .notificationSource(device: device, bytes) : .dataSource(device: device, bytes)
        switch state.phase {
        case .ready:
            return [.emit(event)]
        case .subscribing:
            guard state.early.count < Self.maxEarlyValues else {
                return [.dropped(device: device, "\(Self.maxEarlyValues) values arrived before its subscriptions completed")]
            }
            devices[device]?.early.append(event)
            return []
        case .idle:
            return [.dropped(device: device, "a value arrived before the client subscribed")]
        }
    }

    mutating func subscribed(_ device: String, generation: Int) -> [Effect] {
        guard let state = devices[device], state.generation == generation, state.phase == .subscribing else { return [] }
        devices[device]?.phase = .ready
        devices[device]?.early = []
        return [.emit(.ready(device: device))] + state.early.map(Effect.emit)
    }

    /// Whether a subscription asked for is still wanted: the device did not go (and maybe come
    /// back) since.
    func isSubscribing(_ device: String, generation: Int) -> Bool {
        devices[device].map { $0.generation == generation && $0.phase == .subscribing } ?? false
    }

    mutating func subscribeFailed(_ device: String, generation: Int) {
        guard devices[device]?.generation == generation else { return }
        devices[device]?.phase = .idle
        devices[device]?.early = []
    }

    /// bluetoothd left the bus: every device is gone.
    mutating func bluetoothdGone() -> [Effect] {
        let effects = devices.keys.sorted().flatMap { end($0) }
        devices = [:]
        roles = [:]
        return effects
    }

    func controlPoint(of device: String) -> String? {
        guard devices[device]?.phase == .ready else { return nil }
        return devices[device]?.characteristics[.controlPoint]
    }

    private mutating func subscribeIfComplete(_ device: String) -> [Effect] {
        guard var state = devices[device], state.phase == .idle, state.connected,
              let dataSource = state.characteristics[.dataSource], let notificationSource = state.characteristics[.notificationSource],
              state.characteristics[.controlPoint] != nil else { return [] }
        state.phase = .subscribing
        state.generation += 1
        devices[device] = state
        return [.subscribe(device: device, dataSource: dataSource, notificationSource: notificationSource, generation: state.generation)]
    }

    /// The device's subscription ends; `.gone` only if `.ready` was reported.
    private mutating func end(_ device: String) -> [Effect] {
        guard let state = devices[device], state.phase != .idle else { return [] }
        devices[device]?.phase = .idle
        devices[device]?.generation += 1
        devices[device]?.early = []
        return state.phase == .ready ? [.emit(.gone(device: device))] : []
    }
}
