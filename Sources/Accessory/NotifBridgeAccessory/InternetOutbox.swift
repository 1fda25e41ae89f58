import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// Replies to the iPhone when no link is up (docs/PROTOCOL.md §10.6, §11.2): each event is
/// sealed with the accessory → host ratchet of the newest exchange that carried a message (the
/// store commits the ratchet's step before the seal is used, so no key serves twice), made into
/// an APNs push body naming that exchange's transport session, and handed to the relay.
final class InternetOutbox: Sendable {
    private let store: AccessoryStore
    private let source = Mutex<(any InternetMessageSource)?>(nil)

    init(store: AccessoryStore) {
        self.store = store
    }

    /// The relay to push through, while the daemon runs with one.
    func attach(_ source: (any InternetMessageSource)?) {
        self.source.withLock { $0 = source }
    }

    func send(_ event: AccessoryEvent.OneOf_Event) async -> Result<Void, SendFailure> {
        guard let source = source.withLock({ $0 }) else {
            return .failure("no iPhone is connected and no relay is configured (--relay); nothing was sent")
        }
        let body: Data
        do {
            guard let target = try store.internetReplyTarget() else {
                return .failure("no iPhone is connected, and no X-Wing exchange has carried a message yet to reply over the internet; nothing was sent")
            }
            guard let session = UUID(uuidString: target.featureID) else {
                return .failure(SendFailure("the exchange's feature \(target.featureID.debugDescription) is not a transport session UUID; nothing was sent"))
            }
            var message = AccessoryEvent()
            message.event = event
            let sealed = try store.sealForInternet(WireCodec.encode(message), exchangeID: target.exchangeID)
            body = try InternetReplySender.push(sealed, sessionIdentifier: session).jsonBody()
        } catch {
            return .failure(SendFailure("cannot seal the reply for the internet: \(error)"))
        }
        switch await source.push(Array(body)) {
        case .delivered: return .success(())
        case .notDelivered(let reason): return .failure(SendFailure("no iPhone is connected, and the push through the relay failed: \(reason)"))
        }
    }
}

/// The feature each exchange's messages last decrypted under, as saved: a batch writes it only
/// when it changed, so the store sees one write per exchange and feature, not one per batch.
final class SavedFeatures: Sendable {
    private let saved = Mutex<[UInt64: String]>([:])

    /// Saves `featureID` for `exchangeID` unless it is already saved.
    func record(_ featureID: String, exchangeID: UInt64, in store: AccessoryStore) throws {
        guard saved.withLock({ $0[exchangeID] }) != featureID else { return }
        try store.saveFeatureID(featureID, exchangeID: exchangeID)
        saved.withLock { $0[exchangeID] = featureID }
    }
}
