import Logging
import NotifBridgeRelayCore
import ServiceLifecycle

/// Ends each open inbox whose token is no longer its accessory's: `relay register` replaced a
/// lost or leaked token, in this relay instance or another on the same database. Every
/// `interval` it reads the inbox-token digests of all open inboxes, one query for up to
/// ``maxDigestLookup`` of them, instead of one query per inbox: 10,000 open inboxes checked
/// every 5 s cost 20 queries, not 10,000.
struct TokenWatch: Service {
    let store: any RelayStorage
    let hub: InboxHub
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try await repeatUntilShutdown(every: interval) { await check() }
    }

    /// One pass over the inboxes open now. A store that cannot answer leaves them open: the next
    /// pass asks again.
    func check() async {
        let open = hub.open
        for start in stride(from: 0, to: open.count, by: maxDigestLookup) {
            let batch = open[start..<min(open.count, start + maxDigestLookup)]
            let digests: [String: [UInt8]]
            do {
                digests = try await store.inboxDigests(of: batch.map(\.accessoryID))
            } catch {
                logger.warning("checking the open inboxes' tokens failed; checking again in \(interval)", metadata: ["error": "\(error)"])
                return
            }
            // An accessory no longer registered has no digest, and its inbox ends too. Not awaited:
            // an inbox busy with a push (up to 10 s with APNs) held back the ones after it.
            for connection in batch where !RelayToken.matches(connection.token, stored: digests[connection.accessoryID] ?? []) {
                connection.end(.refused(RelayError(.unauthorized, "the inbox token was replaced (relay register); connect with the new one")))
            }
        }
    }
}
