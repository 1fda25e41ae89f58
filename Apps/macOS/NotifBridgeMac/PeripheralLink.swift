import CoreBluetooth
import Foundation
import NotifBridgeGATT
import NotifBridgeWire

/// The Mac as the accessory's GATT peripheral (PROTOCOL.md §2.1): the NotifBridge service with
/// its inbox and outbox, advertised under the accessory's name; each central that writes to the
/// inbox becomes a `ChunkLink` the daemon serves like any other. What to answer each request is
/// `PeripheralRequestHandler`'s decision; this class carries it out. State lives on `queue`.
final class PeripheralLink: NSObject, CBPeripheralManagerDelegate, @unchecked Sendable {
    let links: AsyncStream<ChunkLink>
    private let linkSink: AsyncStream<ChunkLink>.Continuation
    private let name: String
    private let queue = DispatchQueue(label: "org.notifbridge.peripheral")
    private var manager: CBPeripheralManager?
    private var handler = PeripheralRequestHandler<UUID, ContinuousClock.Instant>()
    private var outbox: CBMutableCharacteristic?
    private var subscriber: CBCentral?
    private var inbox: ChunkInbox?
    /// Chunks for the central, and the writes waiting for theirs to be handed over.
    private var notifications = NotificationQueue()
    private var notified = 0
    private var queued = 0
    private var writers: [(through: Int, continuation: CheckedContinuation<Void, any Error>)] = []

    init(name: String) {
        self.name = name
        (links, linkSink) = AsyncStream.makeStream(of: ChunkLink.self)
        super.init()
        manager = CBPeripheralManager(delegate: self, queue: queue)
    }

    // MARK: CBPeripheralManagerDelegate

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn, outbox == nil else { return }
        let service = CBMutableService(type: CBUUID(string: GATTProfile.serviceUUID), primary: true)
        let inboxCharacteristic = CBMutableCharacteristic(type: CBUUID(string: GATTProfile.inboxCharacteristicUUID), properties: [.write, .writeWithoutResponse], value: nil, permissions: [.writeable])
        let outboxCharacteristic = CBMutableCharacteristic(type: CBUUID(string: GATTProfile.outboxCharacteristicUUID), properties: [.notify], value: nil, permissions: [.readable])
        service.characteristics = [inboxCharacteristic, outboxCharacteristic]
        outbox = outboxCharacteristic
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?) {
        guard error == nil else { return }
        peripheral.startAdvertising([
            CBAdvertisementDataServiceUUIDsKey: [CBUUID(string: GATTProfile.serviceUUID)],
            CBAdvertisementDataLocalNameKey: name,
        ])
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
        guard let first = requests.first else { return }
        let writes = requests.map { request in
            PeripheralRequestHandler<UUID, ContinuousClock.Instant>.Write(
                central: request.central.identifier,
                characteristic: request.characteristic.uuid.uuidString,
                offset: request.offset,
                value: [UInt8](request.value ?? Data())
            )
        }
        switch handler.received(writes, unread: inbox?.unread ?? 0, maximumUpdateValueLength: first.central.maximumUpdateValueLength, now: .now) {
        case .accepted(let effects):
            peripheral.respond(to: first, withResult: .success)
            if subscriber == nil || subscriber?.identifier == first.central.identifier { subscriber = first.central }
            apply(effects)
        case .refused(let error, _):
            peripheral.respond(to: first, withResult: CBATTError.Code(rawValue: Int(error.rawValue)) ?? .unlikelyError)
        }
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
        let error = handler.read(characteristic: request.characteristic.uuid.uuidString)
        peripheral.respond(to: request, withResult: CBATTError.Code(rawValue: Int(error.rawValue)) ?? .readNotPermitted)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic) {
        subscriber = central
        handler.subscribed(central.identifier)
        drain()
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic) {
        handler.unsubscribed(central.identifier, now: .now)
        let grace = handler.resubscribeGrace.components.seconds
        queue.asyncAfter(deadline: .now() + .seconds(Int(grace))) { [weak self] in
            guard let self else { return }
            apply(handler.expire(now: .now))
        }
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        drain()
    }

    // MARK: Links

    private func apply(_ effects: [PeripheralRequestHandler<UUID, ContinuousClock.Instant>.Effect]) {
        for effect in effects {
            switch effect {
            case .open(let central, let chunkLength):
                let inbox = ChunkInbox()
                self.inbox = inbox
                linkSink.yield(ChunkLink(
                    peer: "BLE \(central)",
                    kind: .bluetooth,
                    chunkLength: chunkLength,
                    inbound: inbox.stream,
                    write: { [weak self] chunks in try await self?.notify(chunks) },
                    close: { [weak self] in self?.closeLink() }
                ))
            case .chunk(let bytes):
                inbox?.push(.chunk(bytes))
            case .chunkLength(let length):
                inbox?.push(.chunkLength(length))
            case .close:
                inbox?.finish()
                inbox = nil
                subscriber = nil
                notifications.removeAll()
                for writer in writers { writer.continuation.resume(throwing: CancellationError()) }
                writers.removeAll()
            }
        }
    }

    /// The daemon ended the link.
    private func closeLink() {
        queue.async { [self] in apply(handler.close()) }
    }

    /// Queues chunks for the subscribed central and returns once CoreBluetooth has taken them.
    private func notify(_ chunks: [[UInt8]]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { [self] in
                guard inbox != nil else { return continuation.resume(throwing: CancellationError()) }
                notifications.append(chunks)
                queued += chunks.count
                writers.append((queued, continuation))
                drain()
            }
        }
    }

    /// Hands waiting chunks to CoreBluetooth until its transmit queue is full; it says when to
    /// go on (`peripheralManagerIsReady`). Nothing goes while the central is unsubscribed.
    private func drain() {
        guard handler.mayNotify, let manager, let outbox, let subscriber else { return }
        notified += notifications.drain { chunk in
            manager.updateValue(Data(chunk), for: outbox, onSubscribedCentrals: [subscriber])
        }
        while let writer = writers.first, writer.through <= notified {
            writers.removeFirst()
            writer.continuation.resume()
        }
    }
}

/// The inbound side of one link: chunks in the order the central wrote them, counted until the
/// daemon reads them, so the handler can refuse writes past its limit of unread ones.
final class ChunkInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var buffered: [LinkInbound] = []
    private var waiter: CheckedContinuation<LinkInbound?, Never>?
    private var finished = false

    var unread: Int { lock.withLock { buffered.count } }

    var stream: AsyncThrowingStream<LinkInbound, any Error> {
        AsyncThrowingStream { [self] in await next() }
    }

    func push(_ item: LinkInbound) {
        let waiting: CheckedContinuation<LinkInbound?, Never>? = lock.withLock {
            guard !finished else { return nil }
            if let waiter {
                self.waiter = nil
                return waiter
            }
            buffered.append(item)
            return nil
        }
        waiting?.resume(returning: item)
    }

    func finish() {
        let waiting = lock.withLock {
            finished = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: nil)
    }

    private func next() async -> LinkInbound? {
        await withCheckedContinuation { continuation in
            let ready: LinkInbound?? = lock.withLock {
                if !buffered.isEmpty { return .some(buffered.removeFirst()) }
                if finished { return .some(nil) }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
