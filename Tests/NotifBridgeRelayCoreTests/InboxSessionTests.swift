import NotifBridgeRelayCore
import NotifBridgeTestSupport
import Testing

@Suite("Inbox session")
struct InboxSessionTests {
    typealias Action = InboxSession.Action

    private func ack(_ seq: UInt64) -> InboxSession.Event { .received(RelayFrame.ack(seq: seq).encoded()) }
    private func messages(_ seqs: ClosedRange<UInt64>) -> [(seq: UInt64, message: [UInt8])] { seqs.map { ($0, [UInt8($0 & 0xff)]) } }
    private func sends(_ seqs: ClosedRange<UInt64>) -> [Action] { seqs.map { .send(.deliver(seq: $0, message: [UInt8($0 & 0xff)])) } }

    @Test("Opening fetches a window; what comes back is sent in order; an ack forgets and refills")
    func flow() {
        var session = InboxSession(limits: RelayLimits(window: 3))
        #expect(session.handle(.opened) == [.fetch(after: 0, limit: 3)])
        #expect(session.handle(.fetched(messages(1...2))) == sends(1...2), "fewer than asked: caught up")
        #expect(session.handle(.posted) == [.fetch(after: 2, limit: 1)])
        #expect(session.handle(.fetched(messages(3...3))) == sends(3...3))
        #expect(session.handle(.posted) == [], "the window is full")
        #expect(session.handle(ack(2)) == [.forget(upTo: 2), .fetch(after: 3, limit: 2)])
        #expect(session.inFlight == [3])
    }

    /// Boundary pair: an ack of the last message sent is taken, one past it ends the connection.
    @Test("An ack of what was sent is taken; of one more, refused; a repeated ack does nothing")
    func ackBoundary() {
        var session = InboxSession(limits: RelayLimits(window: 4))
        _ = session.handle(.opened)
        _ = session.handle(.fetched(messages(1...2)))
        var refusing = session
        #expect(session.handle(ack(2)) == [.forget(upTo: 2), .fetch(after: 2, limit: 4)])
        #expect(session.handle(ack(2)) == [])
        #expect(session.handle(ack(1)) == [])
        guard case .close(let error) = refusing.handle(ack(3)).first else {
            Issue.record("an ack of a message never sent was taken")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(refusing.handle(ack(1)) == [], "nothing after the close")
    }

    @Test("An accessory that sends anything but acks is cut off", arguments: [
        RelayFrame.deliver(seq: 1, message: [1]).encoded(), [9, 9], [0x02, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    ])
    func badFrames(bytes: [UInt8]) {
        var session = InboxSession()
        _ = session.handle(.opened)
        guard case .close = session.handle(.received(bytes)).first else {
            Issue.record("\(bytes) was taken")
            return
        }
    }

    @Test("A post or an ack during a fetch fetches again once it returns, so nothing waits for the next event")
    func eventsDuringAFetch() {
        var session = InboxSession(limits: RelayLimits(window: 4))
        _ = session.handle(.opened)
        #expect(session.handle(.posted) == [])
        #expect(session.handle(.fetched([])) == [.fetch(after: 0, limit: 4)])
        #expect(session.handle(.fetched(messages(1...2))) == sends(1...2))
        #expect(session.handle(.posted) == [.fetch(after: 2, limit: 2)])
        #expect(session.handle(ack(2)) == [.forget(upTo: 2)])
        #expect(session.handle(.fetched(messages(3...4))) == sends(3...4) + [.fetch(after: 4, limit: 2)])
    }

    @Test("A store that returns messages out of order or past the window ends the connection")
    func storeMistakes() {
        var backwards = InboxSession(limits: RelayLimits(window: 4))
        _ = backwards.handle(.opened)
        _ = backwards.handle(.fetched(messages(5...5)))
        _ = backwards.handle(.posted)
        guard case .close = backwards.handle(.fetched(messages(4...4))).last else {
            Issue.record("message 4 after 5 was sent")
            return
        }
        var over = InboxSession(limits: RelayLimits(window: 2))
        _ = over.handle(.opened)
        guard case .close = over.handle(.fetched(messages(1...3))).last else {
            Issue.record("three messages in a window of two")
            return
        }
    }

    /// A seeded walk: posts, fetches answered by a model store, acks of what arrived, and
    /// connections that drop and come back. Every message reaches the accessory, first copies in
    /// order; once all is acknowledged the store is empty; nothing is ever forgotten unacknowledged.
    @Test("Posts, acks and dropped connections: everything arrives once in order, and the queue empties", arguments: [UInt64(1), 2, 3])
    func walk(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var store: [(seq: UInt64, message: [UInt8])] = []
        var nextSeq: UInt64 = 1
        var firstArrivals: [UInt64] = []
        var stored: Set<UInt64> = []
        var received: [UInt64] = []
        var session = InboxSession(limits: RelayLimits(window: 8))
        var pendingFetch: (after: UInt64, limit: Int)?

        func run(_ actions: [Action]) {
            for action in actions {
                switch action {
                case .fetch(let after, let limit):
                    #expect(pendingFetch == nil, "two fetches at once")
                    pendingFetch = (after, limit)
                case .send(.deliver(let seq, _)):
                    received.append(seq)
                    if !stored.contains(seq), !firstArrivals.contains(seq) { firstArrivals.append(seq) }
                case .send(.ack), .send(.push), .send(.pushed), .push:
                    Issue.record("unexpected \(action)")
                case .forget(let upTo):
                    #expect(store.filter { $0.seq <= upTo }.allSatisfy { stored.contains($0.seq) }, "forgot something not stored")
                    store.removeAll { $0.seq <= upTo }
                case .close(let error):
                    Issue.record("closed: \(error)")
                }
            }
        }
        run(session.handle(.opened))
        for _ in 0..<3_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                store.append((nextSeq, [1]))
                nextSeq += 1
                run(session.handle(.posted))
            case 3...5:
                guard let fetch = pendingFetch else { continue }
                pendingFetch = nil
                run(session.handle(.fetched(Array(store.filter { $0.seq > fetch.after }.prefix(fetch.limit)))))
            case 6...7:
                // The accessory commits what arrived up to some message (a batch ends anywhere)
                // and acknowledges that one.
                guard let upTo = received.randomElement(using: &random) else { continue }
                stored.formUnion(received.filter { $0 <= upTo })
                received.removeAll { $0 <= upTo }
                run(session.handle(ack(upTo)))
            default:
                // The connection drops: what was not acknowledged is sent again on the next one.
                received.removeAll()
                pendingFetch = nil
                session = InboxSession(limits: RelayLimits(window: 8))
                run(session.handle(.opened))
            }
        }
        // Settle: answer every fetch and acknowledge everything.
        for _ in 0..<10_000 {
            if let fetch = pendingFetch {
                pendingFetch = nil
                run(session.handle(.fetched(Array(store.filter { $0.seq > fetch.after }.prefix(fetch.limit)))))
            } else if let highest = received.max() {
                stored.formUnion(received)
                received.removeAll()
                run(session.handle(ack(highest)))
            } else {
                break
            }
        }
        #expect(stored == Set(1..<nextSeq))
        #expect(firstArrivals == Array(1..<nextSeq), "first copies in order")
        #expect(store.isEmpty)
    }
}
