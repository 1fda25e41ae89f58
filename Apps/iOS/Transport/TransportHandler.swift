import AccessoryTransportExtension
import Foundation
import enum NotifBridgeGATT.TransportOutcome
import NotifBridgeHostCore
import NotifBridgeWire

/// `AccessoryTransportSession.EventHandler` over `TransportLink`: resumes the exchange the
/// security extension agreed, binds the feature, then writes each message as a Sealed one and
/// completes it as Apple's contract says (`.success` once written, `.transportFailed` when the
/// link failed and a retry may work, `.transportUnavailable` when Bluetooth cannot be had).
/// Sealed messages from the accessory go to the data provider. All state lives on `queue`.
/// The platform's `TransportMessage` and the package's share a name: each use names its module.
final class TransportHandler: AccessoryTransportSession.EventHandler, @unchecked Sendable {
    typealias Completion = @Sendable (AccessoryMessage.Result) -> Void

    private let session: AccessoryTransportSession
    private let queue = DispatchQueue(label: "org.notifbridge.transport")
    private var link: TransportLink?
    private var client: AccessoryLinkClient?
    /// Messages that arrived before the link was ready, in order.
    private var waiting: [(AccessoryTransportExtension.TransportMessage, Completion)] = []
    /// The open link's chunk length; nil while no link is open.
    private var chunkLength: Int?
    /// The exchange the open link asked to resume, and whether the accessory refused it.
    private var tried: SecurityRelay.Resume?
    private var keysMissing = false

    init(session: AccessoryTransportSession) {
        self.session = session
        session.transport = .bluetooth
    }

    func messageReceived(_ message: AccessoryTransportExtension.TransportMessage, completion: @escaping @Sendable (AccessoryMessage.Result) -> Void) {
        queue.async { [self] in
            if link == nil { link = TransportLink(sessionID: message.sessionID, resume: SharedExchange.load()) }
            guard link?.isReady == true else {
                if keysMissing {
                    // The accessory refused the exchange this link tried. Only a newer one, agreed
                    // by the security extension since, can help; until then the system retries.
                    guard let resume = SharedExchange.load(), resume != tried, let chunkLength else {
                        return completion(.failure(.transportFailed))
                    }
                    waiting.append((message, completion))
                    resumeExchange(resume, chunkLength: chunkLength)
                    return
                }
                waiting.append((message, completion))
                linkClient().start()
                return
            }
            write(message, completion)
        }
    }

    func sessionInvalidated(error: AccessoryTransportSession.Error?) {
        queue.async { [self] in
            client?.close()
            client = nil
            failWaiting(.failed)
        }
    }

    private func linkClient() -> AccessoryLinkClient {
        if let client { return client }
        let client = AccessoryLinkClient(queue: queue, restoreIdentifier: session.transportStateRestoreIdentifier) { [weak self] event in
            self?.linkEvent(event)
        }
        self.client = client
        return client
    }

    private func write(_ message: AccessoryTransportExtension.TransportMessage, _ completion: @escaping Completion) {
        guard let link, let client else { return completion(.failure(.transportUnavailable)) }
        let relayed = NotifBridgeHostCore.TransportMessage(sessionID: message.sessionID, data: message.data)
        guard let sealed = try? link.outbound(relayed) else { return completion(.failure(.transportUnavailable)) }
        client.send(sealed) { outcome in completion(Self.result(outcome)) }
    }

    private func linkEvent(_ event: AccessoryLinkClient.Event) {
        switch event {
        case .opened(let chunkLength):
            self.chunkLength = chunkLength
            if let resume = SharedExchange.load() {
                resumeExchange(resume, chunkLength: chunkLength)
            } else {
                perform(link?.connected(maxChunkLength: chunkLength) ?? [])
            }
        case .message(let message):
            perform(link?.received(message) ?? [])
        case .failed(let outcome):
            failWaiting(outcome)
        case .closed:
            link?.linkClosed()
            chunkLength = nil
            keysMissing = false
            failWaiting(.failed)
        }
    }

    /// Asks the accessory, on the open link, to resume this exchange.
    private func resumeExchange(_ resume: SecurityRelay.Resume, chunkLength: Int) {
        tried = resume
        keysMissing = false
        link?.exchangeAgreed(resume)
        perform(link?.connected(maxChunkLength: chunkLength) ?? [])
    }

    private func perform(_ actions: [TransportLink.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                client?.send(message)
            case .ready:
                let ready = waiting
                waiting.removeAll()
                for (message, completion) in ready { write(message, completion) }
            case .deliver(let message):
                try? session.sendMessageToDataProvider(AccessoryTransportExtension.TransportMessage(sessionID: message.sessionID, data: message.data))
            case .keysNeeded:
                // Only the security extension can agree keys; the system retries once it has.
                keysMissing = true
                failWaiting(.failed)
            case .peerError:
                break
            case .close:
                client?.close()
            }
        }
    }

    private func failWaiting(_ outcome: TransportOutcome) {
        let failed = waiting
        waiting.removeAll()
        for (_, completion) in failed { completion(Self.result(outcome)) }
    }

    static func result(_ outcome: TransportOutcome) -> AccessoryMessage.Result {
        switch outcome {
        case .sent: .success
        case .failed: .failure(.transportFailed)
        case .unavailable: .failure(.transportUnavailable)
        }
    }
}
