import NotifBridgeWire
import Testing

/// One budget shared by every link's reassembler: the sum of their partial messages' declared
/// lengths never exceeds it, and every way a partial message ends gives its bytes back.
@Suite("Reassembly budget across links")
struct ReassemblyBudgetTests {
    private let now = ContinuousClock.now

    /// A FIRST chunk declaring `total` bytes for message `id`, with one payload byte.
    private func first(_ id: UInt8, declaring total: UInt32) -> [UInt8] {
        [0x01, id] + withUnsafeBytes(of: total.littleEndian, Array.init) + [0xAA]
    }

    @Test("Links together reserve up to the capacity; one byte more is refused", arguments: [
        (second: 1000, fits: true),
        (second: 1001, fits: false),
    ])
    func capacityBoundary(second: Int, fits: Bool) throws {
        let budget = ReassemblyBudget(capacity: 3000)
        var a = ChunkReassembler(budget: budget)
        var b = ChunkReassembler(budget: budget)
        _ = try a.receive(first(0, declaring: 2000), now: now)
        if fits {
            #expect(try b.receive(first(0, declaring: UInt32(second)), now: now) == nil)
            #expect(budget.reservedBytes == 3000)
        } else {
            let error = #expect(throws: WireError.self) { try b.receive(first(0, declaring: UInt32(second)), now: now) }
            #expect(error?.code == .tooManyPartialMessages)
            #expect(budget.reservedBytes == 2000, "a refused message reserves nothing")
            #expect(b.partialMessageCount == 0)
        }
    }

    @Test("Completion, a restarted id, a bad continuation, expiry and reset each give the bytes back")
    func releases() throws {
        let budget = ReassemblyBudget(capacity: 100_000)
        var link = ChunkReassembler(limits: WireLimits(partialMessageTimeout: .seconds(10)), budget: budget)
        _ = try link.receive(first(1, declaring: 2), now: now)
        #expect(try link.receive([0x02, 1, 0xBB], now: now) == [0xAA, 0xBB])
        #expect(budget.reservedBytes == 0, "completed")

        _ = try link.receive(first(2, declaring: 500), now: now)
        _ = try link.receive(first(2, declaring: 300), now: now)
        #expect(budget.reservedBytes == 300, "a FIRST that restarts id 2 releases the first reservation")
        #expect(throws: WireError.self) { try link.receive([0x02, 2, 0xBB], now: now) }
        #expect(budget.reservedBytes == 0, "a LAST that does not complete drops the message")

        _ = try link.receive(first(3, declaring: 400), now: now)
        link.expire(now: now + .seconds(11))
        #expect(budget.reservedBytes == 0, "expired")

        _ = try link.receive(first(4, declaring: 700), now: now)
        _ = try link.receive(first(5, declaring: 800), now: now)
        link.reset()
        #expect(budget.reservedBytes == 0, "the link ended")
    }
}
