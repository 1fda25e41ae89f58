import Foundation
import Logging
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeLogGate
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// Where the internet transport's messages come from, in order, numbered: the relay inbox
/// client (NotifBridgeRelayClient) in the command line. `receive` returns once a message may be
/// acknowledged, and throws when it must come again.
public protocol InternetMessageSource: Sendable {
    /// For the log: where the messages come from.
    var name: String { get }
    /// Runs until the task is cancelled.
    func run(receive: @escaping @Sendable (_ seq: UInt64, _ message: [UInt8]) async throws -> Void) async
    /// Hands a reply for the iPhone (an APNs push body, §10.6) to the relay, which pushes it.
    func push(_ body: [UInt8]) async -> InternetPushResult
}

/// How a reply sent over the internet went.
public enum InternetPushResult: Sendable, Equatable {
    case delivered
    /// Not delivered, saying why (for the person who asked to send it).
    case notDelivered(String)
}

/// The internet transport on the accessory (docs/PROTOCOL.md §10–11): messages from the relay
/// inbox are opened with the held exchange's receiving ratchet, and each event is stored with
/// the ratchet's changes in one transaction through the alert pipeline, so it is planned, shown
/// and alerted like one from a link. Only then is the message acknowledged to the relay.
final class RelayRunner: Sendable {
    let source: any InternetMessageSource
    let store: AccessoryStore
    let pipeline: AlertPipeline
    let keys: KeyRing
    let presenter: any Presenter
    let logger: Logger
    /// Rations the per-message lines: whoever holds a post token can send any number of
    /// messages that do not open.
    let gate: LogGate
    /// The inbox of the exchange last used, kept between messages: loading a ratchet reads up
    /// to 50,000 kept keys. The client hands over one message at a time.
    private let inbox = Mutex<InternetInbox?>(nil)

    /// The origin under which the log gate rations this transport's lines.
    static let origin = "the relay"

    init(source: any InternetMessageSource, store: AccessoryStore, pipeline: AlertPipeline, keys: KeyRing, presenter: any Presenter, logger: Logger, gate: LogGate) {
        self.source = source
        self.store = store
        self.pipeline = pipeline
        self.keys = keys
        self.presenter = presenter
        self.logger = logger
        self.gate = gate
    }

    /// Holds the inbox open only while the exchange held has internet ratchets. An accessory
    /// without them could open none of its messages, and would acknowledge (so delete) every
    /// one: a second box given the same relay ID, or a fresh one, would eat the first's.
    func run() async {
        var waitingSaid = false
        while !Task.isCancelled {
            // Taken before the check, so that a change between the two is not missed.
            let changes = keys.exchangeChanges()
            switch holdsInternetExchange() {
            case true?:
                waitingSaid = false
                logger.info("internet messages from \(source.name)")
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { [self] in await source.run { [self] seq, message in try receive(seq, message) } }
                    group.addTask { [self] in
                        for await _ in changes where holdsInternetExchange() == false { return }
                    }
                    await group.next()
                    group.cancelAll()
                }
            case false?:
                if !waitingSaid {
                    logger.notice("\(source.name) is not opened until an X-Wing key exchange over Bluetooth or the local network gives this accessory internet keys; its messages wait at the relay")
                    waitingSaid = true
                }
                await Self.next(changes)
            case nil:
                await Self.next(changes, orAfter: Self.storeRetryDelay)
            }
        }
    }

    /// How long the inbox waits before it asks the store again after a failed read.
    static let storeRetryDelay = Duration.seconds(30)

    /// Returns at the next change of the held exchange, or after `delay` if one is given.
    private static func next(_ changes: AsyncStream<Void>, orAfter delay: Duration? = nil) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in changes { return } }
            if let delay { group.addTask { try? await Task.sleep(for: delay) } }
            await group.next()
            group.cancelAll()
        }
    }

    /// Whether the exchange held now has internet ratchets; nil when the store could not say.
    private func holdsInternetExchange() -> Bool? {
        guard let exchangeID = keys.snapshot.exchange?.exchangeID else { return false }
        if inbox.withLock({ $0?.exchangeID == exchangeID }) { return true }
        do {
            return try store.hasReceivingRatchet(exchangeID: exchangeID)
        } catch {
            gate.pass(Self.origin) { logger.warning("the relay inbox waits: the store could not say whether this accessory has internet keys: \(error)") }
            return nil
        }
    }

    /// Returns once the message's event is stored, or once it is known never to open (then it
    /// is acknowledged all the same, so that it does not hold back the relay's window). Throws
    /// when the store failed, or the exchange is gone: nothing is acknowledged, and the relay
    /// sends it again.
    func receive(_ seq: UInt64, _ message: [UInt8]) throws {
        // The exchange went while the inbox was open: the message stays at the relay.
        guard var current = try currentInbox() else { throw NoInternetExchange() }
        defer { inbox.withLock { $0 = current } }
        switch current.receive(message) {
        case .deliver(let event, let changes, let index):
            let delivery = AccessorySession.Delivery(event: event, exchangeID: current.exchangeID, featureID: "")
            let results = pipeline.commit([delivery], opened: [(current.exchangeID, changes)])
            if case .failure(let error) = results.first {
                current.rolledBack()
                throw error
            }
            current.committed()
            logger.debug("relay message \(seq) (index \(index)) stored")
        case .discard(let error, let changes, let index):
            do {
                try store.saveOpened(changes, exchangeID: current.exchangeID)
            } catch {
                current.rolledBack()
                throw error
            }
            current.committed()
            gate.pass(Self.origin) {
                logger.warning("relay message \(seq) (index \(index)) opened but refused: \(error)")
                presenter.present(.refused(detail: "a message from the relay: \(error)"))
            }
        case .refuse(let refusal):
            gate.pass(Self.origin) {
                // Not an error on the accessory's side: say which of the two usual causes it is.
                let hint = refusal.code == .unknownKeyID
                    ? " (sealed for another key exchange: the iPhone has paired again since, or another accessory is given this relay ID)" : ""
                logger.notice("relay message \(seq) refused: \(refusal)\(hint)")
            }
        }
    }

    struct NoInternetExchange: Error, CustomStringConvertible {
        var description: String { "the key exchange with internet ratchets is no longer held; the message stays at the relay" }
    }

    /// The inbox of the held exchange, loaded from the store when the exchange changed; nil
    /// when no exchange with internet ratchets is held.
    private func currentInbox() throws -> InternetInbox? {
        guard let exchangeID = keys.snapshot.exchange?.exchangeID else { return nil }
        // Taken out, not copied, so that opening does not copy its kept keys.
        if let cached = inbox.withLock({ $0.take() }), cached.exchangeID == exchangeID { return cached }
        guard let (ratchet, keyID) = try store.receivingRatchet(exchangeID: exchangeID) else { return nil }
        return InternetInbox(ratchet: ratchet, keyID: keyID, exchangeID: exchangeID)
    }
}
