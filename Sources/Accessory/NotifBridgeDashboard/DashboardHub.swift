import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import Synchronization

/// The dashboard's view of the daemon: a presenter that remembers the link state and passes each
/// change on to the open pages. It only hands values over: pages render in their own tasks, so
/// the commit path that presents never waits for a browser.
public final class DashboardHub: Presenter {
    /// The link and key-exchange state the status panel shows.
    struct LinkState: Sendable {
        var serving: [String] = []
        var peers: [String] = []
        var exchange: Exchange?
        var problem: Problem?

        struct Exchange: Sendable {
            var suite: String
            var id: String
            var resumed: Bool
            var at: Date?
        }

        struct Problem: Sendable {
            var text: String
            var at: Date
        }
    }

    /// What a page is told.
    enum Update: Sendable {
        case notification(StoredNotification, PresenterEvent.Change)
        case removedAll
        case state(LinkState)
    }

    /// Pages open at once; one more gets a 503 until another closes.
    public static let maxPages = 8
    /// Updates queued for one page. A page that falls this far behind is closed and reloads.
    static let pageBuffer = 512
    /// Peers remembered as connected: a peer that floods connects cannot grow the panel.
    static let maxListedPeers = 16
    /// Listeners and advertisements remembered, the newest.
    static let maxListedLinks = 4

    private struct Hub {
        var state = LinkState()
        var pages: [UInt64: AsyncStream<Update>.Continuation] = [:]
        var nextPage: UInt64 = 0
    }

    private let hub: Mutex<Hub>
    private let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        hub = Mutex(Hub())
        self.now = now
    }

    /// The key exchange the daemon holds at start, which a host may resume.
    public func holding(suite: String, exchangeID: UInt64) {
        hub.withLock { $0.state.exchange = .init(suite: suite, id: exchangeHex(exchangeID), resumed: false, at: nil) }
    }

    var state: LinkState { hub.withLock { $0.state } }

    var openPages: Int { hub.withLock { $0.pages.count } }

    /// A stream of updates for one page, or nil when `maxPages` are open. The stream ends when the
    /// page falls behind; ending the returned task's iteration unsubscribes.
    func subscribe() -> AsyncStream<Update>? {
        let (stream, continuation) = AsyncStream.makeStream(of: Update.self, bufferingPolicy: .bufferingOldest(Self.pageBuffer))
        let id: UInt64? = hub.withLock { hub in
            guard hub.pages.count < Self.maxPages else { return nil }
            hub.nextPage += 1
            hub.pages[hub.nextPage] = continuation
            return hub.nextPage
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in
            _ = self?.hub.withLock { $0.pages.removeValue(forKey: id) }
        }
        return stream
    }

    public func present(_ event: PresenterEvent) {
        present([event])
    }

    public func present(_ events: [PresenterEvent]) {
        let at = now()
        let (updates, pages) = hub.withLock { hub -> ([Update], [AsyncStream<Update>.Continuation]) in
            var updates: [Update] = []
            var stateChanged = false
            for event in events {
                switch event {
                case .notification(let record, let change):
                    updates.append(.notification(record, change))
                case .removedAll:
                    updates.append(.removedAll)
                default:
                    stateChanged = Self.apply(event, to: &hub.state, at: at) || stateChanged
                }
            }
            if stateChanged { updates.append(.state(hub.state)) }
            return (updates, Array(hub.pages.values))
        }
        guard !updates.isEmpty else { return }
        for page in pages {
            for update in updates {
                if case .dropped = page.yield(update) {
                    page.finish()
                    break
                }
            }
        }
    }

    /// Folds a non-notification event into the link state; false when it changes nothing shown.
    static func apply(_ event: PresenterEvent, to state: inout LinkState, at: Date) -> Bool {
        switch event {
        case .listening(let host, let port, let suite, let keyID):
            state.serving = Array((state.serving + ["TCP \(host):\(port) (\(suite), key \(keyID))"]).suffix(maxListedLinks))
        case .advertising(let adapter, let name, let suite, let keyID):
            state.serving = Array((state.serving + ["Bluetooth \"\(name)\" on \(adapter) (\(suite), key \(keyID))"]).suffix(maxListedLinks))
        case .connected(let peer):
            guard state.peers.count < maxListedPeers else { return false }
            state.peers.append(peer)
        case .disconnected(let peer):
            guard let index = state.peers.firstIndex(of: peer) else { return false }
            state.peers.remove(at: index)
        case .keyExchange(let suite, let exchangeID, let resumed):
            state.exchange = .init(suite: suite, id: exchangeHex(exchangeID), resumed: resumed, at: at)
        case .resync(let reason):
            state.problem = .init(text: "resync: \(reason)", at: at)
        case .refused(let detail):
            state.problem = .init(text: "refused: \(detail)", at: at)
        case .notification, .removedAll, .ignored, .burstSummary:
            return false
        }
        return true
    }
}

/// Several presenters as one: the daemon's terminal or JSON lines and the dashboard.
public struct PresenterGroup: Presenter {
    let presenters: [any Presenter]

    public init(_ presenters: [any Presenter]) {
        self.presenters = presenters
    }

    public func present(_ event: PresenterEvent) {
        for presenter in presenters { presenter.present(event) }
    }

    public func present(_ events: [PresenterEvent]) {
        for presenter in presenters { presenter.present(events) }
    }
}
