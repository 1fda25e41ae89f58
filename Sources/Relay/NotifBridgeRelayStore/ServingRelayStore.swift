import Foundation
import NIOPosix
import NotifBridgeRelayCore

/// A ``RelayStore`` as the relay server uses it: each statement runs on NIO's thread pool, not on
/// the Swift runtime's shared threads. A commit waits for its fsync, and a 2-core machine has
/// two shared threads: run there, every request of the relay waited while the disk did.
/// (`RelayStore`'s own methods block their caller, as the command line and tests want.)
public struct ServingRelayStore: RelayStorage {
    public let store: RelayStore
    private let threads: NIOThreadPool

    public init(_ store: RelayStore, threads: NIOThreadPool = .singleton) {
        self.store = store
        self.threads = threads
    }

    public var limits: RelayLimits { store.limits }

    public func register(accessory id: String, inbox: RelayToken, post: RelayToken) async throws {
        try await threads.runIfActive { try store.register(accessory: id, inbox: inbox, post: post) }
    }

    public func authorizes(_ token: String, accessory id: String, as role: RelayRole) async throws -> Bool {
        try await threads.runIfActive { try store.authorizes(token, accessory: id, as: role) }
    }

    public func inboxDigests(of ids: [String]) async throws -> [String: [UInt8]] {
        try await threads.runIfActive { try store.inboxDigests(of: ids) }
    }

    public func postBatch(_ posts: [(message: [UInt8], accessoryID: String)], now: Date) async throws -> [Result<UInt64, any Error>] {
        try await threads.runIfActive { try store.postBatch(posts, now: now) }
    }

    public func fetch(for id: String, after: UInt64, limit: Int, now: Date) async throws -> [(seq: UInt64, message: [UInt8])] {
        try await threads.runIfActive { try store.fetch(for: id, after: after, limit: limit, now: now) }
    }

    public func forget(for id: String, upTo: UInt64) async throws {
        try await threads.runIfActive { try store.forget(for: id, upTo: upTo) }
    }

    public func sweep(now: Date) async throws -> Int {
        try await threads.runIfActive { try store.sweep(now: now) }
    }

    public func queue(of id: String) async throws -> RelayAdmission.Queue? {
        try await threads.runIfActive { try store.queue(of: id) }
    }

    public func setPushTarget(_ target: PushTarget, accessory id: String) async throws {
        try await threads.runIfActive { try store.setPushTarget(target, accessory: id) }
    }

    public func pushTarget(of id: String) async throws -> PushTarget? {
        try await threads.runIfActive { try store.pushTarget(of: id) }
    }

    public func elsewhere() -> AsyncStream<RelayElsewhere> {
        store.elsewhere()
    }

    public func announceInbox(of id: String) {}
}
