import Logging
import NotifBridgeDBus
import NotifBridgeLogGate
import Synchronization

/// The accessory's pairing agent (`org.bluez.Agent1`, BlueZ doc/agent-api.txt), so that a
/// headless accessory can bond with an iPhone (ANCS needs an encrypted, bonded link) without an
/// interactive `bluetoothctl`. It makes the adapter pairable for a window only, and accepts
/// pairing only inside it: outside the window a nearby stranger cannot bond.
///
/// Its IO capability is DisplayOnly: the iPhone asks for the six digits the accessory shows
/// (`onPasskey`: the log, a display), so the bond is protected against a man in the middle.
public final class PairingAgent: Sendable {
    public static let path = "/org/notifbridge/agent"
    static let agentManager = "org.bluez.AgentManager1"
    static let agentInterface = "org.bluez.Agent1"
    static let rejected = "org.bluez.Error.Rejected"
    static let capability = "DisplayOnly"

    /// Longest window a flag may open: pairing is a moment's job, not a mode.
    public static let maxWindow = Duration.seconds(3600)

    private let bus: DBusConnection
    private let adapterPath: String
    private let logger: Logger
    /// Rations the lines about refused devices: the agent stays registered after the window.
    private let gate: LogGate
    private let closes: ContinuousClock.Instant
    private let onPasskey: @Sendable (_ device: String, _ passkey: String) -> Void
    /// Passkeys shown, with their devices: DisplayPasskey repeats as digits are typed, and a
    /// pairing tried again after a failure comes with a new passkey, which is shown too.
    private let shown = Mutex<Set<String>>([])

    private init(bus: DBusConnection, adapterPath: String, window: Duration, gate: LogGate, logger: Logger, onPasskey: @escaping @Sendable (String, String) -> Void) {
        self.bus = bus
        self.gate = gate
        self.adapterPath = adapterPath
        self.logger = logger
        self.onPasskey = onPasskey
        closes = .now + window
    }

    /// Registers the agent as bluetoothd's default and makes `adapter` pairable for `window`
    /// (bluetoothd ends pairability itself when `PairableTimeout` runs out).
    public static func start(
        adapter: String,
        window: Duration,
        bus address: DBusBusAddress = .system,
        gate: LogGate = LogGate(LogThrottle()),
        logger: Logger,
        onPasskey: @escaping @Sendable (_ device: String, _ passkey: String) -> Void
    ) async throws -> PairingAgent {
        guard let adapterPath = BlueZ.adapterPath(adapter) else {
            throw BluetoothFailure("\"\(adapter)\" is not an adapter name such as hci0")
        }
        guard window > .zero, window <= maxWindow else {
            throw BluetoothFailure("a pairing window is more than 0 s and at most \(maxWindow)")
        }
        let bus: DBusConnection
        do { bus = try await DBusConnection.connect(to: address) } catch {
            throw BluetoothFailure("cannot reach the system bus (is dbus running, and may this user talk to bluetoothd?)", error)
        }
        let agent = PairingAgent(bus: bus, adapterPath: adapterPath, window: window, gate: gate, logger: logger, onPasskey: onPasskey)
        do {
            try await bus.exportObject(at: path) { [weak agent] call in
                agent?.handle(call) ?? .notHandled
            }
            for member in ["RegisterAgent", "RequestDefaultAgent"] {
                let arguments: [DBusValue] = member == "RegisterAgent" ? [.objectPath(path), .string(capability)] : [.objectPath(path)]
                _ = try await bus.call(destination: BlueZ.service, path: "/org/bluez", interface: agentManager, member: member, arguments: arguments)
            }
            for (property, value) in [("PairableTimeout", DBusValue.uint32(wholeSeconds(window))), ("Pairable", .bool(true))] {
                _ = try await bus.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.properties, member: "Set",
                                       arguments: [.string(BlueZ.adapter), .string(property), .variant(value)])
            }
        } catch {
            bus.close()
            throw BluetoothFailure("cannot register the pairing agent with bluetoothd", error)
        }
        logger.notice("pairable on \(adapter) for \(wholeSeconds(window)) s: pair from the iPhone's Bluetooth settings")
        return agent
    }

    /// `PairableTimeout` is whole seconds; a fraction rounds up.
    static func wholeSeconds(_ duration: Duration) -> UInt32 {
        UInt32(clamping: duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0))
    }

    /// Calls `handler` once if the agent's bus connection is lost (not at ``stop()``).
    /// bluetoothd then drops the agent, and only a new one, made by a restart, answers pairings
    /// as this one does.
    public func onBusLoss(_ handler: @escaping DBusLossHandler) {
        bus.onLoss(handler)
    }

    /// Unregisters the agent. The adapter's pairability ends with its own timeout.
    public func stop() async {
        // Briefly: closing the connection unregisters the agent anyway (bluetoothd sees it go).
        _ = try? await bus.call(destination: BlueZ.service, path: "/org/bluez", interface: Self.agentManager, member: "UnregisterAgent",
                                arguments: [.objectPath(Self.path)], timeout: BlueZ.stopCallTimeout)
        bus.close()
    }

    var isOpen: Bool { ContinuousClock.now < closes }

    /// bluetoothd's calls, on the bus thread.
    func handle(_ call: MethodCall) -> MethodReply {
        guard call.path == Self.path, call.interface == Self.agentInterface else { return .notHandled }
        let device = call.arguments.first?.stringValue ?? "a device"
        switch call.member {
        case "Release", "Cancel":
            return .empty
        case "DisplayPasskey", "DisplayPinCode", "RequestConfirmation":
            guard isOpen else { return refuse(device, "asked to show a passkey outside the pairing window") }
            let passkey: String
            if call.member != "DisplayPinCode", let number = call.arguments.dropFirst().first?.uint32Value, number <= 999_999 {
                passkey = String(repeating: "0", count: 6 - String(number).count) + String(number)
            } else if call.member == "DisplayPinCode", let pin = call.arguments.dropFirst().first?.stringValue, pin.utf8.count <= 16, pin.allSatisfy(\.isNumber) {
                passkey = pin
            } else {
                return .invalidArguments("expected a device and a passkey")
            }
            // A display-only agent is not asked to confirm a number; if bluetoothd asks anyway
            // (numeric comparison), the number is shown like a passkey, so the person compares it
            // with the iPhone's before confirming there, rather than accepted unseen.
            if shown.withLock({ $0.insert(device + " " + passkey).inserted }) {
                onPasskey(device, passkey)
            }
            return .empty
        case "RequestAuthorization":
            // Just Works: a device that claims no keyboard and no display would bond with no
            // passkey to check, and no protection against a man in the middle. An iPhone types
            // the passkey the accessory shows, so it never needs this.
            return refuse(device, "Just Works pairing (no passkey) is refused; pair from a device that can type the passkey shown")
        case "AuthorizeService":
            guard isOpen else { return refuse(device, "\(call.member) outside the pairing window") }
            logger.notice("accepted \(call.member) from \(BlueZ.address(of: device))")
            return .empty
        case "RequestPinCode", "RequestPasskey":
            // DisplayOnly: the accessory has no keyboard to type what the iPhone shows.
            return refuse(device, "asked to type a passkey, which a display-only accessory cannot")
        default:
            return .notHandled
        }
    }

    private func refuse(_ device: String, _ reason: String) -> MethodReply {
        let address = BlueZ.address(of: device)
        gate.pass(address) { logger.notice("refused \(address): \(reason)") }
        return .error(name: Self.rejected, message: reason)
    }
}
