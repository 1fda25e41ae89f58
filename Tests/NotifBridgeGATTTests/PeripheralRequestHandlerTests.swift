import NotifBridgeGATT
import NotifBridgeWire
import Testing

/// The Mac accessory's answers to CoreBluetooth's requests (PROTOCOL.md §2.1).
@Suite("Peripheral request handling")
struct PeripheralRequestHandlerTests {
    typealias Handler = PeripheralRequestHandler<String, ContinuousClock.Instant>
    typealias Write = Handler.Write
    let t0 = ContinuousClock.now
    static let inbox = GATTProfile.inboxCharacteristicUUID

    private func refusal(_ answer: Handler.Answer) -> ATTError? {
        if case .refused(let error, _) = answer { return error }
        return nil
    }

    @Test("Each write check at its limit and one past it", arguments: [
        (Write(central: "a", characteristic: inbox, offset: 0, value: [0x03, 0]), ATTError?.none),
        (Write(central: "a", characteristic: inbox, offset: 1, value: [0x03, 0]), .requestNotSupported),
        (Write(central: "a", characteristic: inbox, value: Array(repeating: 0, count: 512)), nil),
        (Write(central: "a", characteristic: inbox, value: Array(repeating: 0, count: 513)), .invalidAttributeValueLength),
        (Write(central: "a", characteristic: GATTProfile.outboxCharacteristicUUID, value: [0x03, 0]), .writeNotPermitted),
    ])
    func writeChecks(write: Write, expected: ATTError?) {
        var handler = Handler()
        let answer = handler.received([write], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(refusal(answer) == expected)
        #expect(handler.owner == (expected == nil ? "a" : nil), "a refused write opens no link")
    }

    @Test("The first central to write owns the link; another is refused while it lasts")
    func oneCentral() {
        var handler = Handler()
        let first = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(first == .accepted([.open("a", chunkLength: 182), .chunk([1])]))
        let other = handler.received([Write(central: "b", characteristic: Self.inbox, value: [2])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(refusal(other) == .writeNotPermitted)
        #expect(handler.close() == [.close("a", reason: "closed by the accessory")])
        let next = handler.received([Write(central: "b", characteristic: Self.inbox, value: [3])], unread: 0, maximumUpdateValueLength: 20, now: t0)
        #expect(next == .accepted([.open("b", chunkLength: 20), .chunk([3])]))
    }

    @Test("Unread writes: up to 512 accepted, the one past refused", arguments: [(511, 1, true), (512, 1, false), (510, 2, true), (511, 2, false)])
    func unreadLimit(unread: Int, batch: Int, accepted: Bool) {
        var handler = Handler()
        let writes = (0..<batch).map { Write(central: "a", characteristic: Self.inbox, value: [UInt8($0)]) }
        let answer = handler.received(writes, unread: unread, maximumUpdateValueLength: 182, now: t0)
        #expect(refusal(answer) == (accepted ? nil : .insufficientResources))
    }

    @Test("A batch is taken whole or refused whole")
    func batches() {
        var handler = Handler()
        let bad = handler.received([
            Write(central: "a", characteristic: Self.inbox, value: [1]),
            Write(central: "a", characteristic: Self.inbox, offset: 4, value: [2]),
        ], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(refusal(bad) == .requestNotSupported)
        #expect(handler.owner == nil)
        let good = handler.received([
            Write(central: "a", characteristic: Self.inbox, value: [1]),
            Write(central: "a", characteristic: Self.inbox, value: [2]),
        ], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(good == .accepted([.open("a", chunkLength: 182), .chunk([1]), .chunk([2])]))
    }

    @Test("A new maximum notification length is reported once")
    func chunkLengthChange() {
        var handler = Handler()
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 20, now: t0)
        let changed = handler.received([Write(central: "a", characteristic: Self.inbox, value: [2])], unread: 0, maximumUpdateValueLength: 512, now: t0)
        #expect(changed == .accepted([.chunkLength(510), .chunk([2])]))
        let same = handler.received([Write(central: "a", characteristic: Self.inbox, value: [3])], unread: 0, maximumUpdateValueLength: 512, now: t0)
        #expect(same == .accepted([.chunk([3])]))
    }

    @Test("Unsubscribing holds notifications; no resubscription within 20 s ends the link", arguments: [(19.999, false), (20.0, true)])
    func resubscribeGrace(seconds: Double, ends: Bool) {
        var handler = Handler()
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        #expect(handler.mayNotify)
        handler.unsubscribed("a", now: t0)
        #expect(!handler.mayNotify)
        let effects = handler.expire(now: t0.advanced(by: .milliseconds(Int(seconds * 1000))))
        #expect(effects.count == (ends ? 1 : 0))
        #expect((handler.owner == nil) == ends)
    }

    /// Writes that arrive after the grace ran out, before the timer's `expire`: the link's
    /// close comes out of whichever call sees the expiry first, and is never lost.
    @Test("A link that expired is closed once, whatever the first write after it", arguments: [
        (Write(central: "a", characteristic: inbox, offset: 1, value: [2]), ATTError?.some(.requestNotSupported)),
        (Write(central: "a", characteristic: inbox, value: Array(repeating: 0, count: 513)), .invalidAttributeValueLength),
        (Write(central: "b", characteristic: inbox, value: [2]), nil),
    ])
    func expiredLinkClosed(write: Write, refused: ATTError?) {
        var handler = Handler()
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        handler.unsubscribed("a", now: t0)
        let late = t0.advanced(by: .seconds(21))
        // The expired link had 512 unread: they are not the new link's.
        let answer = handler.received([write], unread: 512, maximumUpdateValueLength: 182, now: late)
        let closes = (answer.effects + handler.expire(now: late)).filter { if case .close = $0 { true } else { false } }
        #expect(refusal(answer) == refused)
        #expect(closes == [.close("a", reason: "the central unsubscribed and did not subscribe again within 20.0 seconds")])
    }

    @Test("A batch larger than a link holds is refused before the expiry, which the timer then reports")
    func oversizedBatchAfterExpiry() {
        var handler = Handler()
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        handler.unsubscribed("a", now: t0)
        let late = t0.advanced(by: .seconds(21))
        let batch = Array(repeating: Write(central: "b", characteristic: Self.inbox, value: [2]), count: handler.maxUnreadWrites + 1)
        #expect(refusal(handler.received(batch, unread: 0, maximumUpdateValueLength: 182, now: late)) == .insufficientResources)
        #expect(handler.expire(now: late).count == 1, "the close is still to come")
    }

    @Test("Subscribing again, or writing, within the grace keeps the link")
    func resubscribe() {
        var handler = Handler()
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [1])], unread: 0, maximumUpdateValueLength: 182, now: t0)
        handler.unsubscribed("a", now: t0)
        handler.subscribed("a")
        #expect(handler.mayNotify)
        #expect(handler.expire(now: t0.advanced(by: .seconds(30))).isEmpty)
        handler.unsubscribed("a", now: t0)
        _ = handler.received([Write(central: "a", characteristic: Self.inbox, value: [2])], unread: 0, maximumUpdateValueLength: 182, now: t0.advanced(by: .seconds(1)))
        #expect(handler.mayNotify)
        handler.unsubscribed("b", now: t0)
        #expect(handler.mayNotify, "another central's unsubscription says nothing about the owner")
    }

    @Test("Reads are refused")
    func reads() {
        #expect(Handler().read(characteristic: GATTProfile.outboxCharacteristicUUID) == .readNotPermitted)
    }

    @Test("Notifications wait while the transmit queue is full and go in order, each once")
    func notificationQueue() {
        var queue = NotificationQueue()
        queue.append([[1], [2], [3]])
        var sent: [[UInt8]] = []
        #expect(queue.drain { chunk in
            guard sent.count < 2 else { return false }
            sent.append(chunk)
            return true
        } == 2)
        #expect(queue.count == 1)
        #expect(queue.drain { sent.append($0); return true } == 1)
        #expect(sent == [[1], [2], [3]])
        #expect(queue.isEmpty)
    }
}

extension PeripheralRequestHandler.Answer {
    /// What an accepted batch set off; a refusal sets off nothing.
    var effects: [PeripheralRequestHandler.Effect] {
        if case .accepted(let effects) = self { effects } else { [] }
    }
}
