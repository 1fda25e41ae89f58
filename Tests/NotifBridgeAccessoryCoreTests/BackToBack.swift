import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// The accessory and host state machines wired back to back in memory: every message one sends
/// is handed to the other, with no IO, so a whole exchange runs deterministically in a test.
struct BackToBack {
    var accessory: AccessorySession
    var host: HostSession
    /// Everything the accessory asked its driver to do, in order.
    var accessoryActions: [AccessorySession.Action] = []
    /// Everything the host reported, in order.
    var hostActions: [HostSession.Action] = []
    var deliveries: [AccessorySession.Delivery] = []
    /// Messages from the host are dropped while false (a cut link).
    var linkUp = true
    /// While true, sealed events fail in the transport relay (a GATT write error).
    var failTransmits = false
    /// While true, accessory → host messages wait in `inFlight` (a slow link).
    var holdAccessoryToHost = false
    var inFlight: [LinkMessage] = []

    init(suite: CipherSuite = .xWing, allowsP256: Bool = true, limits: WireLimits = .default) throws {
        let identity = try AccessoryPrivateKey.generate(suite)
        accessory = AccessorySession(identity: identity, exchange: nil, configuration: .init(allowsP256: allowsP256, transports: [.bluetooth], limits: limits))
        host = HostSession(configuration: .init(identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
    }

    mutating func connect() {
        pumpHost(host.connected(maxChunkLength: 4096))
    }

    @discardableResult
    mutating func send(_ operation: HostOperation) throws -> UInt64 {
        let sent = try host.send(operation, now: Date(timeIntervalSince1970: 1_778_490_000))
        pumpHost(sent.actions)
        return sent.sequence
    }

    /// Ends the link and starts the next one against an accessory that kept its exchange.
    mutating func reconnect() {
        host.disconnected()
        let persisted = accessoryActions.last { if case .persistExchange = $0 { true } else { false } }
        guard case .persistExchange(let parameters, _) = persisted else { preconditionFailure("no exchange was persisted") }
        accessory = AccessorySession(identity: accessory.identity, exchange: .init(parameters: parameters), configuration: accessory.configuration)
        connect()
    }

    mutating func deliverToAccessory(_ message: LinkMessage) {
        pumpAccessory(accessory.received(message))
    }

    mutating func pumpHost(_ actions: [HostSession.Action]) {
        for action in actions {
            hostActions.append(action)
            switch action {
            case .send(let message) where linkUp:
                pumpAccessory(accessory.received(message))
            case .transmit(let message, let sequence):
                if failTransmits {
                    pumpHost(host.transportCompleted(sequence: sequence, result: .failure(.transportFailed)))
                } else if linkUp {
                    pumpAccessory(accessory.received(message))
                }
            default:
                break
            }
        }
    }

    mutating func pumpAccessory(_ actions: [AccessorySession.Action]) {
        for action in actions {
            accessoryActions.append(action)
            switch action {
            case .send(let message):
                if holdAccessoryToHost {
                    inFlight.append(message)
                } else {
                    pumpHost(host.received(message))
                }
            case .deliver(let delivery):
                deliveries.append(delivery)
                let alerted: Bool
                if case .add(let add) = delivery.event.event { alerted = add.alerting.shouldAlert } else { alerted = false }
                pumpAccessory(accessory.delivered(delivery, stored: true, alerted: alerted))
            case .persistExchange, .resumedExchange, .forgetExchange, .replaceIdentity, .refused, .close:
                break
            }
        }
    }

    mutating func flushAccessoryToHost() {
        while !inFlight.isEmpty {
            pumpHost(host.received(inFlight.removeFirst()))
        }
    }

    var receipts: [HostSession.Receipt] {
        hostActions.compactMap { if case .receipt(let receipt) = $0 { receipt } else { nil } }
    }

    var linkErrors: [Notifbridge_V1_LinkError] {
        hostActions.compactMap { if case .peerError(let error) = $0 { error } else { nil } }
    }
}

extension AccessorySession.Action {
    /// A short name for matching action sequences in tests.
    var name: String {
        switch self {
        case .send(let message):
            if case .error(let error) = message.body { return "send LinkError(\(error.code))" }
            return "send \(message.kindName)"
        case .persistExchange: return "persistExchange"
        case .resumedExchange: return "resumedExchange"
        case .forgetExchange: return "forgetExchange"
        case .replaceIdentity: return "replaceIdentity"
        case .deliver: return "deliver"
        case .refused: return "refused"
        case .close: return "close"
        }
    }
}

func sample(_ id: String, title: String = "Anna Schmidt", body: String = "Lunch? 🍜") -> HostNotification {
    HostNotification(source: "com.apple.MobileSMS", id: id, sourceName: "Messages", title: title, body: body, thread: "chat-anna")
}
