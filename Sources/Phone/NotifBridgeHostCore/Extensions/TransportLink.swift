import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The iOS transport extension's side of one link, with no IO. On iOS the key exchange and the
/// ciphertext travel in two extension processes: the security extension agrees the keys
/// (`SecurityRelay`) and remembers the exchange; the transport extension, which carries every
/// notification, resumes that exchange on its own link (Hello.resume), binds the feature and
/// relays Sealed messages both ways (`TransportRelay`). It cannot answer a KeyOffer: only the
/// system encapsulates, through the security extension.
public struct TransportLink: Sendable {
    public enum Action: Sendable, Hashable {
        case send(LinkMessage)
        /// The exchange was resumed and the feature bound: Sealed messages may go.
        case ready
        /// Hand to `session.sendMessageToDataProvider(_:)`.
        case deliver(TransportMessage)
        /// The accessory no longer holds the exchange (a KeyOffer or a Resync): messages cannot
        /// go on this link until the security extension has agreed new keys.
        case keysNeeded(String)
        case peerError(Notifbridge_V1_LinkError)
        /// End the link: the accessory broke the protocol.
        case close(String)
    }

    private var security: SecurityRelay
    private var transport: TransportRelay

    /// - Parameters:
    ///   - sessionID: the notification feature's session (`TransportMessage.sessionID`).
    ///   - resume: the exchange the security extension agreed, as it saved it; nil if none yet.
    public init(sessionID: UUID, resume: SecurityRelay.Resume?, suites: [CipherSuite] = CipherSuite.allCases) {
        security = SecurityRelay(suites: suites, resume: resume)
        transport = TransportRelay(sessionID: sessionID)
    }

    public var sessionID: UUID { transport.sessionID }
    /// Whether Sealed messages may go now.
    public var isReady: Bool { transport.bound }

    /// A link opened: ask to resume the agreed exchange.
    public mutating func connected(maxChunkLength: Int) -> [Action] {
        guard security.resume != nil else { return [.keysNeeded("no key exchange has been agreed yet")] }
        return [.send(security.hello(maxChunkLength: maxChunkLength))]
    }

    public mutating func linkClosed() {
        security.linkClosed()
        transport.linkClosed()
    }

    /// A newer exchange was agreed (the security extension saved it): the next link resumes it.
    public mutating func exchangeAgreed(_ resume: SecurityRelay.Resume) {
        security = SecurityRelay(suites: security.suites, resume: resume)
    }

    /// `messageReceived(_:completion:)`: the system's ciphertext as a Sealed message; throws
    /// `.transportUnavailable` while the link is not ready.
    public func outbound(_ message: TransportMessage) throws(AccessoryMessageError) -> LinkMessage {
        try transport.outbound(message)
    }

    public mutating func received(_ message: LinkMessage) -> [Action] {
        switch message.body {
        case .keyConfirm(let confirm):
            guard confirm.resumed else { return [] }
            do throws(SecurityRelay.Refusal) {
                guard case .established = try security.keyConfirm(confirm) else { return [] }
            } catch {
                return [.close(error.description)]
            }
            return [.send(transport.bind()), .ready]
        case .keyOffer:
            transport.linkClosed()
            return [.keysNeeded("the accessory offers a key instead of resuming the agreed exchange")]
        case .resync(let resync):
            transport.linkClosed()
            return [.keysNeeded("the accessory asked to exchange keys again (\(resync.reason))")]
        case .sealed(let sealed):
            guard isReady, let delivered = transport.inbound(sealed) else {
                return [.close("Sealed before the feature was bound, or for an unknown feature")]
            }
            return [.deliver(delivered)]
        case .error(let error):
            return [.peerError(error)]
        case .hello, .keyMaterial, .bindFeature, nil:
            return [.close("accessory sent \(message.kindName), which travels host → accessory")]
        }
    }
}
