import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeWire
import Testing
@testable import NotifBridgeDashboard

/// The hub's bounds: how many pages, how far a page may fall behind, how many peers it lists.
@Suite("Dashboard hub")
struct DashboardHubTests {
    private static func record(_ id: String) -> StoredNotification {
        var n = WireNotification()
        n.id = WireNotificationID(source: "com.apple.MobileSMS", notification: id)
        return StoredNotification(notification: n, alerting: nil, removed: false, revision: .init(epoch: 1, sequence: 1), receivedAt: Date(), updatedAt: Date())
    }

    @Test("At most maxPages pages at once; closing one makes room")
    func pageLimit() {
        let hub = DashboardHub()
        var pages = (0..<DashboardHub.maxPages).compactMap { _ in hub.subscribe() }
        #expect(pages.count == DashboardHub.maxPages)
        #expect(hub.subscribe() == nil)
        pages.removeLast()
        #expect(hub.openPages == DashboardHub.maxPages - 1)
        #expect(hub.subscribe() != nil)
    }

    @Test("A page may fall pageBuffer updates behind and still get the next; one more ends its stream, and other pages go on")
    func lagging() async {
        let hub = DashboardHub()
        let behind = hub.subscribe()!
        let tooFar = hub.subscribe()!
        for index in 0..<DashboardHub.pageBuffer {
            hub.present(.notification(Self.record("m\(index)"), change: .added))
        }
        var iterator = behind.makeAsyncIterator()
        for _ in 0..<DashboardHub.pageBuffer { _ = await iterator.next() }
        hub.present(.removedAll(count: 1))
        guard case .removedAll? = await iterator.next() else {
            Issue.record("a page exactly pageBuffer behind lost the next update")
            return
        }
        var received = 0
        for await _ in tooFar { received += 1 }
        #expect(received == DashboardHub.pageBuffer, "the page one past the limit was closed with what it had")
        #expect(hub.openPages == 1)
    }

    @Test("Peers listed: up to maxListedPeers; one more is not remembered, a disconnect makes room")
    func peers() {
        var state = DashboardHub.LinkState()
        for index in 0..<DashboardHub.maxListedPeers {
            #expect(DashboardHub.apply(.connected(peer: "p\(index)"), to: &state, at: Date()))
        }
        #expect(!DashboardHub.apply(.connected(peer: "one-more"), to: &state, at: Date()))
        #expect(state.peers.count == DashboardHub.maxListedPeers)
        #expect(DashboardHub.apply(.disconnected(peer: "p0"), to: &state, at: Date()))
        #expect(!DashboardHub.apply(.disconnected(peer: "never-listed"), to: &state, at: Date()))
        #expect(DashboardHub.apply(.connected(peer: "one-more"), to: &state, at: Date()))
    }
}

/// A live update replaces the list item with its key, so two notifications must never share one.
@Suite("Dashboard list keys")
struct DashboardKeyTests {
    @Test("keys of notifications whose source and ID split one text differently differ; a plain one reads source/id", arguments: [
        (("a/b", "c"), ("a", "b/c")),
        (("a%2Fb", "c"), ("a/b", "c")),
        (("a", "b"), ("a/", "b")),
    ])
    func distinct(first: (String, String), second: (String, String)) {
        #expect(NotificationView.key(source: first.0, id: first.1) != NotificationView.key(source: second.0, id: second.1))
    }

    @Test("a source without / or % keeps its plain key")
    func plain() {
        #expect(NotificationView.key(source: "com.apple.MobileSMS", id: "m/1") == "com.apple.MobileSMS/m/1")
    }
}
