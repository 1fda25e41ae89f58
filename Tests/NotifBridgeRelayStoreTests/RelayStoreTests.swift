import Foundation
import NotifBridgeRelayCore
@_spi(Testing) import NotifBridgeRelayStore
import NotifBridgeTestSupport
import Testing

/// The relay's store on a real SQLite file, reopened as after a restart.
@Suite("Relay store")
struct RelayStoreTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let limits = RelayLimits(maxMessageLength: 100, maxQueuedMessages: 3, maxQueuedBytes: 172, window: 2, timeToLive: .seconds(60))

    private func token(_ byte: UInt8) throws -> RelayToken { try RelayToken(randomBytes: Array(repeating: byte, count: 32)) }

    private func registered(_ directory: TemporaryDirectory) throws -> RelayStore {
        let store = try RelayStore(path: directory.path + "/relay.sqlite", limits: Self.limits)
        try store.register(accessory: "watch-1", inbox: try token(1), post: try token(2))
        return store
    }

    @Test("A new relay database, its WAL and shared-memory files are 0600 from the start")
    func privateFromTheStart() throws {
        let directory = try TemporaryDirectory("relay-mode")
        defer { directory.remove() }
        let path = directory.path + "/relay.sqlite"
        let store = try registered(directory)
        defer { try? store.close() }
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            #expect(stat(file, &info) == 0, "\(file) exists while the store is open")
            #expect(info.st_mode & 0o777 == 0o600, "\(file)")
        }
    }

    @Test("A batch of posts in one transaction: each admitted against what the ones before it queued, a refusal costs only itself")
    func batch() throws {
        let directory = try TemporaryDirectory("relay-batch")
        defer { directory.remove() }
        let store = try registered(directory)
        let results = try store.postBatch([
            (relayMessage(1), "watch-1"), (relayMessage(9, length: 101), "watch-1"), (relayMessage(2), "nobody"),
            (relayMessage(3), "watch-1"), (relayMessage(4), "watch-1"), (relayMessage(5), "watch-1"),
        ], now: now)
        func outcome(_ result: Result<UInt64, any Error>) -> String {
            switch result {
            case .success(let seq): "\(seq)"
            case .failure(let error as RelayError): error.code.rawValue
            case .failure(let error): "\(type(of: error))"
            }
        }
        // The limit is 3 messages: the third accepted fills it, the fourth is refused.
        #expect(results.map(outcome) == ["1", "tooLarge", "UnknownRelayAccessory", "2", "3", "queueFull"])
        #expect(try store.queue(of: "watch-1") == .init(messages: 3, bytes: 108))
        #expect(try store.fetch(for: "watch-1", after: 0, limit: 10, now: now).map(\.message) == [relayMessage(1), relayMessage(3), relayMessage(4)])
    }

    @Test("Posts are numbered, fetched in order after a number, forgotten once acknowledged, and survive a restart")
    func lifecycle() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        do {
            let store = try registered(directory)
            #expect(try store.post(relayMessage(1), to: "watch-1", now: now) == 1)
            #expect(try store.post(relayMessage(2, length: 37), to: "watch-1", now: now) == 2)
            try store.close()
        }
        let store = try RelayStore(path: directory.path + "/relay.sqlite", limits: Self.limits)
        #expect(try store.writerSynchronousMode() == 2, "an accepted post is fsynced (FULL), not left to a checkpoint")
        #expect(try store.fetch(for: "watch-1", after: 0, limit: 10, now: now).map(\.seq) == [1, 2])
        #expect(try store.fetch(for: "watch-1", after: 1, limit: 10, now: now).map(\.message) == [relayMessage(2, length: 37)])
        try store.forget(for: "watch-1", upTo: 1)
        #expect(try store.queue(of: "watch-1") == .init(messages: 1, bytes: 37))
        #expect(try store.post(relayMessage(3), to: "watch-1", now: now) == 3, "numbers go on after a restart and a forget")
        #expect(throws: UnknownRelayAccessory.self) { try store.post(relayMessage(1), to: "nobody", now: now) }
    }

    /// Boundary pairs on the queue limits: the last message that fits is taken, the next refused,
    /// and an acknowledgement makes room again.
    @Test("A full queue refuses the post and keeps what waits; an ack makes room")
    func queueLimits() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        let store = try registered(directory)
        for _ in 0..<3 { _ = try store.post(relayMessage(0), to: "watch-1", now: now) }
        do {
            _ = try store.post(relayMessage(0), to: "watch-1", now: now)
            Issue.record("a fourth message was queued")
        } catch let error as RelayError {
            #expect(error.code == .queueFull)
        }
        #expect(try store.queue(of: "watch-1") == .init(messages: 3, bytes: 108))
        try store.forget(for: "watch-1", upTo: 3)
        _ = try store.post(relayMessage(0, length: 100), to: "watch-1", now: now)
        #expect(throws: RelayError.self) { try store.post(relayMessage(0, length: 73), to: "watch-1", now: now) }
        _ = try store.post(relayMessage(0, length: 72), to: "watch-1", now: now)
        #expect(try store.queue(of: "watch-1") == .init(messages: 2, bytes: 172))
        #expect(throws: RelayError.self) { try store.post(relayMessage(0, length: 101), to: "watch-1", now: now) }
        #expect { try store.post(relayMessage(0, length: 35), to: "watch-1", now: now) } throws: { ($0 as? RelayError)?.code == .malformed }
        #expect(try store.queue(of: "watch-1") == .init(messages: 2, bytes: 172), "refusals take no room")
    }

    @Test("An expired message is not fetched, and a sweep deletes it and gives its room back")
    func expiry() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        let store = try registered(directory)
        _ = try store.post(relayMessage(1), to: "watch-1", now: now)
        _ = try store.post(relayMessage(2), to: "watch-1", now: now.addingTimeInterval(30))
        let later = now.addingTimeInterval(60)
        #expect(try store.fetch(for: "watch-1", after: 0, limit: 10, now: later).map(\.seq) == [2])
        #expect(try store.sweep(now: later) == 1)
        #expect(try store.queue(of: "watch-1") == .init(messages: 1, bytes: 36))
    }

    @Test("Tokens: each role's own, compared by digest; an unknown accessory or a bad ID is refused alike")
    func tokens() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        let store = try registered(directory)
        #expect(try store.authorizes(try token(1).text, accessory: "watch-1", as: .inbox))
        #expect(try store.authorizes(try token(2).text, accessory: "watch-1", as: .post))
        #expect(try !store.authorizes(try token(2).text, accessory: "watch-1", as: .inbox))
        #expect(try !store.authorizes(try token(1).text, accessory: "watch-2", as: .inbox))
        #expect(try !store.authorizes(try token(1).text, accessory: "../etc", as: .inbox))
        let raw = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/relay.sqlite"))
        #expect(raw.range(of: Data(try token(1).text.utf8)) == nil, "the token itself is not stored")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/relay.sqlite")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("Inbox digests for the open-inbox check: the registered IDs' only, up to the lookup limit")
    func inboxDigests() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        let store = try registered(directory)
        try store.register(accessory: "watch-2", inbox: try token(3), post: try token(4))
        #expect(try store.inboxDigests(of: []) == [:])
        let atLimit = (1...maxDigestLookup - 2).map { "absent-\($0)" } + ["watch-2", "watch-1"]
        let digests = try store.inboxDigests(of: atLimit)
        #expect(digests == ["watch-1": RelayToken.digest(of: try token(1).text), "watch-2": RelayToken.digest(of: try token(3).text)])
        #expect(throws: RelayError.self) { try store.inboxDigests(of: atLimit + ["watch-3"]) }
        try store.register(accessory: "watch-1", inbox: try token(5), post: try token(2))
        #expect(try store.inboxDigests(of: ["watch-1"]) == ["watch-1": RelayToken.digest(of: try token(5).text)])
    }

    @Test("Accessory IDs: 64 characters are taken, 65 and foreign characters refused", arguments: [
        (String(repeating: "a", count: 64), true), (String(repeating: "a", count: 65), false), ("", false),
        ("watch 1", false), ("wätch", false), ("Watch_1-b", true),
    ])
    func accessoryIDs(id: String, valid: Bool) {
        #expect(((try? RelayStore.validate(accessoryID: id)) != nil) == valid)
    }

    /// `InboxSession` carried out against the store, with the accessory acknowledging everything
    /// it receives: all posts arrive in order and the queue ends empty.
    @Test("An inbox session over the store delivers every post in order and empties the queue")
    func sessionOverStore() throws {
        let directory = try TemporaryDirectory("relay")
        defer { directory.remove() }
        let store = try RelayStore(path: directory.path + "/relay.sqlite", limits: RelayLimits(window: 4))
        try store.register(accessory: "watch-1", inbox: try token(1), post: try token(2))
        var session = InboxSession(limits: store.limits)
        var delivered: [UInt64] = []
        var pending: [InboxSession.Action] = session.handle(.opened)
        for index in 0..<25 {
            _ = try store.post(relayMessage(UInt8(index)), to: "watch-1", now: now)
            pending += session.handle(.posted)
            while !pending.isEmpty {
                switch pending.removeFirst() {
                case .fetch(let after, let limit):
                    pending += session.handle(.fetched(try store.fetch(for: "watch-1", after: after, limit: limit, now: now)))
                case .send(.deliver(let seq, _)):
                    delivered.append(seq)
                    pending += session.handle(.received(RelayFrame.ack(seq: seq).encoded()))
                case .forget(let upTo):
                    try store.forget(for: "watch-1", upTo: upTo)
                case .send(.ack), .send(.push), .send(.pushed), .push, .close:
                    Issue.record("unexpected action")
                }
            }
        }
        #expect(delivered == Array(1...25))
        #expect(try store.queue(of: "watch-1") == .init(messages: 0, bytes: 0))
        #expect(try store.fetch(for: "watch-1", after: 0, limit: 10, now: now).isEmpty)
    }
}
