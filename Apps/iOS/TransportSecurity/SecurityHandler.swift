import AccessoryTransportExtension
import Foundation
import enum NotifBridgeCrypto.CipherSuite
import NotifBridgeHostCore
import NotifBridgeWire

/// `AccessorySecuritySession.EventHandler` over `SecurityRelay`, on its own link: Hello, the
/// accessory's KeyOffer to the system as its public key, the system's encapsulated key back as
/// KeyMaterial, and the KeyConfirm saved for the transport extension to resume. All state
/// lives on `queue`. The platform's `SecurityMessage` and the package's (its portable shape)
/// share a name, so each use names its module.
///
/// One exchange per session: once it is confirmed the link is closed, and a further
/// encapsulated key in the same session completes with `.transportFailed` (whether the system
/// then starts a new session is not documented; docs/APPLE.md lists it to check).
final class SecurityHandler: AccessorySecuritySession.EventHandler, @unchecked Sendable {
    private let session: AccessorySecuritySession
    private let queue = DispatchQueue(label: "org.notifbridge.security")
    private var relay = SecurityRelay(suites: CipherSuite.allCases)
    private var link: AccessoryLinkClient?
    private var chunkLength = GATTProfile.chunkLength(forATTMTU: 23)
    /// The accessory's key as last handed to the system, to hand again if it asks.
    private var offered: AccessoryTransportExtension.SecurityMessage?
    /// The system's completion for the KeyMaterial in flight: success once the accessory has
    /// confirmed (and persisted) the exchange.
    private var pending: (@Sendable (AccessoryMessage.Result) -> Void)?

    init(session: AccessorySecuritySession) {
        self.session = session
        queue.async { self.open() }
    }

    private func open() {
        let link = AccessoryLinkClient(queue: queue, restoreIdentifier: nil) { [weak self] event in self?.linkEvent(event) }
        self.link = link
        link.start()
    }

    private func linkEvent(_ event: AccessoryLinkClient.Event) {
        switch event {
        case .opened(let chunkLength):
            // No resumption: the system runs this extension when it needs new keys.
            self.chunkLength = chunkLength
            relay = SecurityRelay(suites: relay.suites)
            link?.send(relay.hello(maxChunkLength: chunkLength))
        case .message(let message):
            received(message)
        case .failed, .closed:
            relay.linkClosed()
            finish(.failure(.transportFailed))
        }
    }

    private func received(_ message: LinkMessage) {
        do throws(SecurityRelay.Refusal) {
            switch message.body {
            case .keyOffer(let offer):
                guard let publicKey = try relay.keyOffer(offer), let suite = Self.suite(publicKey.cipherSuite) else { return }
                let platform = AccessoryTransportExtension.SecurityMessage(keyType: .publicKey, cipherSuite: suite, version: .version1, key: publicKey.key, supportedTransports: [.bluetooth])
                offered = platform
                try? session.sendSecurityMessage(platform)
            case .keyConfirm(let confirm):
                guard case .established = try relay.keyConfirm(confirm) else { return }
                SharedExchange.save(relay.resume)
                finish(.success)
                // Done: leave the accessory's one link to the transport extension, whose feature
                // binding a Hello of ours would drop (PROTOCOL.md §4.3).
                link?.close()
                link = nil
            case .resync:
                if relay.resync(), let link { link.send(relay.hello(maxChunkLength: chunkLength)) }
            default:
                break
            }
        } catch {
            session.cancel(error: .unknown)
        }
    }

    func messageReceived(_ message: AccessoryTransportExtension.SecurityMessage, completion: @escaping @Sendable (AccessoryMessage.Result) -> Void) {
        queue.async { [self] in
            switch message.keyType {
            case .publicKey:
                // The system asks for the accessory's key again: hand over the one offered.
                if let offered { try? session.sendSecurityMessage(offered) }
                completion(.success)
            case .encapsulatedKey:
                let answer = NotifBridgeHostCore.SecurityMessage(
                    keyType: .encapsulatedKey,
                    cipherSuite: String(describing: message.cipherSuite),
                    version: String(describing: message.version),
                    key: message.key,
                    identifier: message.identifier
                )
                guard let material = try? relay.encapsulatedKey(answer), let link else {
                    completion(.failure(.transportFailed))
                    return
                }
                finish(.failure(.transportFailed))  // an earlier answer that never got its KeyConfirm
                pending = completion
                link.send(material)
            @unknown default:
                completion(.failure(.transportFailed))
            }
        }
    }

    func sessionInvalidated(error: AccessorySecuritySession.Error?) {
        queue.async { [self] in
            link?.close()
            link = nil
            offered = nil
            finish(.failure(.transportFailed))
        }
    }

    private func finish(_ result: AccessoryMessage.Result) {
        pending?(result)
        pending = nil
    }

    private static func suite(_ name: String) -> AccessoryTransportExtension.SecurityMessage.CipherSuite? {
        switch CipherSuite(wireName: name) {
        case .xWing: .xWing
        case .p256: .p256
        case nil: nil
        }
    }
}
