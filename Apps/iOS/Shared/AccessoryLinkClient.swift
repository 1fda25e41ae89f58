import AccessorySetupKit
import CoreBluetooth
import Foundation
import NotifBridgeGATT
import NotifBridgeWire

/// One link from an extension to the paired accessory: a CoreBluetooth central that finds the
/// accessory through AccessorySetupKit, subscribes to the outbox before anything is written
/// (PROTOCOL.md §2.1), and writes inbox chunks one at a time. Every decision is the package's:
/// `CentralConnectionPolicy` (when to connect, give up, back off), `CentralWriteQueue` (chunk
/// sizing and order), `ChunkReassembler`; this class carries them out. State lives on `queue`.
final class AccessoryLinkClient: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate, @unchecked Sendable {
    enum Event {
        /// The link is open: send Hello now, framed at this chunk length.
        case opened(chunkLength: Int)
        case message(LinkMessage)
        /// No link could be had; what was waiting for one should complete with this.
        case failed(TransportOutcome)
        case closed(reason: String)
    }

    typealias Completion = @Sendable (TransportOutcome) -> Void

    private let queue: DispatchQueue
    private let restoreIdentifier: String?
    private let onEvent: (Event) -> Void
    private var policy = CentralConnectionPolicy<ContinuousClock.Instant>()
    private var writes = CentralWriteQueue<Int>()
    private var completions: [Int: Completion] = [:]
    private var nextToken = 0
    private var reassembler = ChunkReassembler(limits: .default)
    private var wanted = false
    private var central: CBCentralManager?
    private var accessories: ASAccessorySession?
    /// AccessorySetupKit lists the paired accessory only once its session is activated; a
    /// connection asked for before then waits for it.
    private var accessoriesReady = false
    private var connectWhenReady = false
    private var peripheral: CBPeripheral?
    private var inbox: CBCharacteristic?

    /// - Parameter restoreIdentifier: `session.transportStateRestoreIdentifier`, so iOS can
    ///   relaunch the extension for this central's events.
    init(queue: DispatchQueue, restoreIdentifier: String?, onEvent: @escaping (Event) -> Void) {
        self.queue = queue
        self.restoreIdentifier = restoreIdentifier
        self.onEvent = onEvent
    }

    /// Asks for a link; the central is created on the first call (created earlier, it reports
    /// the radio powered off). Call on `queue`.
    func start() {
        wanted = true
        let (admission, effects) = policy.messageArrived(now: .now)
        apply(effects)
        if case .reject(let outcome) = admission { onEvent(.failed(outcome)) }
    }

    /// Writes one link message; `completion` learns whether all of it was written. Call on `queue`.
    func send(_ message: LinkMessage, completion: Completion? = nil) {
        var token: Int?
        if let completion {
            nextToken += 1
            token = nextToken
            completions[nextToken] = completion
        }
        carryOut(writes.enqueue(WireCodec.encode(message), token: token))
    }

    func close() {
        wanted = false
        if let central, let peripheral { central.cancelPeripheralConnection(peripheral) }
        carryOut(writes.closed())
    }

    private func apply(_ effects: [CentralConnectionPolicy<ContinuousClock.Instant>.Effect]) {
        for effect in effects {
            switch effect {
            case .createCentral:
                let options: [String: Any]? = restoreIdentifier.map { [CBCentralManagerOptionRestoreIdentifierKey: $0] }
                central = CBCentralManager(delegate: self, queue: queue, options: options)
                let session = ASAccessorySession()
                session.activate(on: queue) { [weak self] event in
                    guard let self, event.eventType == .activated else { return }
                    accessoriesReady = true
                    if connectWhenReady {
                        connectWhenReady = false
                        connect()
                    }
                }
                accessories = session
            case .connect:
                connect()
            case .cancelConnect:
                if let central, let peripheral { central.cancelPeripheralConnection(peripheral) }
            case .failWaiting(let outcome):
                carryOut(writes.failWaiting(outcome))
                onEvent(.failed(outcome))
            case .wake(let instant):
                let delay = ContinuousClock.now.duration(to: instant)
                let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                queue.asyncAfter(deadline: .now() + max(seconds, 0)) { [weak self] in
                    guard let self else { return }
                    apply(policy.tick(now: .now, waiting: wanted ? 1 : 0))
                }
            }
        }
    }

    /// The accessory AccessorySetupKit paired, retrieved by its Bluetooth identifier.
    private func connect() {
        guard accessoriesReady else {
            connectWhenReady = true
            return
        }
        guard let central, let identifier = accessories?.accessories.compactMap(\.bluetoothIdentifier).first,
              let found = central.retrievePeripherals(withIdentifiers: [identifier]).first else {
            apply(policy.accessoryUnknown())
            return
        }
        found.delegate = self
        peripheral = found
        central.connect(found, options: nil)
    }

    private func carryOut(_ effects: [CentralWriteQueue<Int>.Effect]) {
        for effect in effects {
            switch effect {
            case .write(let chunk):
                guard let peripheral, let inbox else { continue }
                peripheral.writeValue(Data(chunk), for: inbox, type: .withResponse)
            case .completed(let token, let outcome):
                completions.removeValue(forKey: token)?(outcome)
            }
        }
    }

    // MARK: CBCentralManagerDelegate

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        let radio: CentralConnectionPolicy<ContinuousClock.Instant>.Radio = switch central.state {
        case .poweredOn: .poweredOn
        case .poweredOff: .poweredOff
        case .unauthorized: .unauthorized
        case .unsupported: .unsupported
        case .resetting: .resetting
        default: .unknown
        }
        apply(policy.radioChanged(radio, now: .now, waiting: wanted ? 1 : 0))
    }

    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {}

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        peripheral.discoverServices([CBUUID(string: GATTProfile.serviceUUID)])
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        apply(policy.connectFailed(now: .now))
    }

    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?) {
        inbox = nil
        reassembler = ChunkReassembler(limits: .default)
        carryOut(writes.closed())
        onEvent(.closed(reason: error?.localizedDescription ?? "the accessory disconnected"))
        apply(policy.disconnected(now: .now, waiting: wanted ? 1 : 0))
    }

    // MARK: CBPeripheralDelegate

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first(where: { $0.uuid == CBUUID(string: GATTProfile.serviceUUID) }) else {
            apply(policy.connectFailed(now: .now))
            return
        }
        let characteristics = [GATTProfile.inboxCharacteristicUUID, GATTProfile.outboxCharacteristicUUID].map { CBUUID(string: $0) }
        peripheral.discoverCharacteristics(characteristics, for: service)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {
        let found = service.characteristics ?? []
        inbox = found.first { $0.uuid == CBUUID(string: GATTProfile.inboxCharacteristicUUID) }
        guard inbox != nil, let outbox = found.first(where: { $0.uuid == CBUUID(string: GATTProfile.outboxCharacteristicUUID) }) else {
            apply(policy.connectFailed(now: .now))
            return
        }
        // Subscribe first, so the accessory's first answer cannot be lost (PROTOCOL.md §2.1).
        peripheral.setNotifyValue(true, for: outbox)
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {
        guard characteristic.uuid == CBUUID(string: GATTProfile.outboxCharacteristicUUID), characteristic.isNotifying, error == nil else { return }
        policy.connected()
        let length = peripheral.maximumWriteValueLength(for: .withoutResponse)
        carryOut(writes.opened(maximumWriteLength: length))
        onEvent(.opened(chunkLength: GATTProfile.chunkLength(forMaximumValueLength: length)))
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        guard let value = characteristic.value, error == nil else { return }
        do {
            guard let bytes = try reassembler.receive([UInt8](value), now: .now) else { return }
            onEvent(.message(try WireCodec.decode(LinkMessage.self, from: bytes)))
        } catch {
            onEvent(.closed(reason: "the accessory sent bytes that do not decode: \(error)"))
        }
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        carryOut(writes.wrote(failed: error != nil))
    }
}
