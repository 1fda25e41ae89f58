import Logging
import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import NotifBridgeWire
import Synchronization
import Testing
@testable import NotifBridgeBLE

/// The central against a stand-in for bluetoothd on a private bus, in the orders that failed
/// in the VM: a scan that finds nothing until it is started again, and a connected accessory
/// whose services bluetoothd dropped from its cache.
@Suite(
    "GATT central on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct CentralBusTests {
    static let adapter = "/org/bluez/hci1"
    static let device = "/org/bluez/hci1/dev_00_AA_01_00_00_00"
    static let inbox = device + "/service0010/char0011"
    static let outbox = device + "/service0010/char0013"

    /// bluetoothd's side: the objects it exports, changed by the calls a central makes.
    final class FakeBlueZ: Sendable {
        struct Script: Sendable {
            /// The scan (counting from 1) in which the accessory first shows up.
            var advertisesFromScan = 1
            /// Connections (counting from 1) after which the cached services lack our characteristics.
            var connectionsWithoutServices: Set<Int> = []
        }

        struct Record: Sendable {
            var scans = 0
            var connects = 0
            var disconnects = 0
            var removed: [String] = []
            var subscribed = 0
            var objects: DBusManagedObjects = [:]
        }

        /// The record behind a class, so the bus thread's handler can share it.
        final class Shared: Sendable {
            let state = Mutex(Record())
        }

        let bus: DBusConnection
        let shared = Shared()

        init(address: DBusBusAddress, script: Script) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName("org.bluez")
            let shared = self.shared
            try await bus.exportObject(at: "/") { call in
                shared.state.withLock { Self.handle(call, script: script, record: &$0) }
            }
        }

        private static func handle(_ call: MethodCall, script: Script, record: inout Record) -> MethodReply {
            switch (call.path, call.member) {
            case ("/", "GetManagedObjects"):
                return .values([.managedObjects(record.objects)])
            case (CentralBusTests.adapter, "Set"), (CentralBusTests.adapter, "SetDiscoveryFilter"), (CentralBusTests.adapter, "StopDiscovery"):
                return .empty
            case (CentralBusTests.adapter, "StartDiscovery"):
                record.scans += 1
                if record.scans >= script.advertisesFromScan, record.objects[CentralBusTests.device] == nil {
                    record.objects[CentralBusTests.device] = [BlueZ.device: [
                        "UUIDs": .stringArray([GATTProfile.serviceUUID.lowercased()]), "Connected": .bool(false), "RSSI": .int16(-40),
                    ]]
                }
                return .empty
            case (CentralBusTests.adapter, "RemoveDevice"):
                let path = call.arguments.first?.stringValue ?? ""
                record.removed.append(path)
                record.objects = record.objects.filter { !$0.key.hasPrefix(path) }
                return .empty
            case (CentralBusTests.device, "Connect"):
                record.connects += 1
                record.objects[CentralBusTests.device]?[BlueZ.device]?["Connected"] = .bool(true)
                record.objects[CentralBusTests.device]?[BlueZ.device]?["ServicesResolved"] = .bool(true)
                if !script.connectionsWithoutServices.contains(record.connects) {
                    record.objects[CentralBusTests.inbox] = [BlueZ.gattCharacteristic: ["UUID": .string(GATTProfile.inboxCharacteristicUUID.lowercased())]]
                    record.objects[CentralBusTests.outbox] = [BlueZ.gattCharacteristic: ["UUID": .string(GATTProfile.outboxCharacteristicUUID.lowercased())]]
                }
                return .empty
            case (CentralBusTests.device, "Disconnect"):
                record.disconnects += 1
                record.objects[CentralBusTests.device]?[BlueZ.device]?["Connected"] = .bool(false)
                return .empty
            case (CentralBusTests.outbox, "StartNotify"):
                record.subscribed += 1
                return .empty
            case (CentralBusTests.inbox, "Get"):
                return .values([.variant(.uint16(185))])
            default:
                return .notHandled
            }
        }
    }

    private static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private static func options(timeout: Duration = .seconds(20)) -> GATTCentral.Options {
        GATTCentral.Options(adapter: "hci1", timeout: timeout, scanRestart: .milliseconds(400), servicesGrace: .milliseconds(400))
    }

    @Test("A scan that finds nothing is started again, and the second scan finds the accessory")
    func scanRestarts() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, script: .init(advertisesFromScan: 2))
        let connection = try await GATTCentral.connect(Self.options(), bus: daemon.address, logger: Self.quiet)
        #expect(connection.link.chunkLength == 182)
        let record = bluez.shared.state.withLock { $0 }
        #expect(record.scans == 2)
        #expect(record.subscribed == 1)
        await connection.disconnect()
        bluez.bus.close()
    }

    @Test("A connected accessory whose cached services lack our characteristics is forgotten and resolved again")
    func cachedServicesDropped() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, script: .init(connectionsWithoutServices: [1]))
        let connection = try await GATTCentral.connect(Self.options(), bus: daemon.address, logger: Self.quiet)
        let record = bluez.shared.state.withLock { $0 }
        #expect(record.connects == 2, "connected again after forgetting the device")
        #expect(record.removed == [Self.device], "the stale cache went with RemoveDevice")
        #expect(record.scans == 2, "the forgotten device was found by a new scan")
        #expect(record.subscribed == 1)
        await connection.disconnect()
        bluez.bus.close()
    }

    @Test("An accessory that never shows up fails with what was tried")
    func nothingFound() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let bluez = try await FakeBlueZ(address: daemon.address, script: .init(advertisesFromScan: 1000))
        let error = await #expect(throws: BluetoothFailure.self) {
            _ = try await GATTCentral.connect(Self.options(timeout: .seconds(1)), bus: daemon.address, logger: Self.quiet)
        }
        let message = error?.description ?? ""
        // How many scans fit in the time depends on the machine's load (a full suite on two cores
        // has starved the bus for seconds), so the message is checked against the count the
        // stand-in saw; that a scan is restarted is scanRestarts' job.
        let scans = bluez.shared.state.withLock { $0.scans }
        #expect(scans >= 1)
        #expect(message.contains("was seen on hci1"), "\(message)")
        #expect(message.contains("(\(scans) scan\(scans == 1 ? "" : "s"))"), "\(message)")
        bluez.bus.close()
    }
}
