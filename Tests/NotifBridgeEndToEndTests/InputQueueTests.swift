@testable import NotifBridgeAccessory
import NotifBridgeTestSupport
import Synchronization
import Testing

/// Backpressure: a link's reader waits while its connection has `capacity` inputs queued, so
/// an iPhone (or an attacker) sending faster than the store commits is held back by TCP
/// instead of growing the daemon's memory.
@Suite("Input queue backpressure")
struct InputQueueTests {
    final class Progress: Sendable {
        let pushed = Atomic<Int>(0)
    }

    @Test("At capacity the producer waits until the consumer takes the batch", arguments: [1, 3])
    func waitsForRoom(capacity: Int) async throws {
        let queue = InputQueue<Int>(capacity: capacity)
        let progress = Progress()
        let producer = Task {
            for n in 0...capacity {
                await queue.pushWhenRoom(n)
                progress.pushed.add(1, ordering: .relaxed)
            }
        }
        try await TestWait.until("the queue to fill") { progress.pushed.load(ordering: .relaxed) == capacity }
        for _ in 0..<50 { await Task.yield() }
        #expect(progress.pushed.load(ordering: .relaxed) == capacity, "item \(capacity + 1) waits while \(capacity) are queued")
        #expect(await queue.takeAll() == Array(0..<capacity))
        await producer.value
        #expect(await queue.takeAll() == [capacity])
    }

    @Test("A producer waiting for room is released when the queue finishes or its task is cancelled")
    func releases() async {
        let finished = InputQueue<Int>(capacity: 1)
        await finished.pushWhenRoom(1)
        let waiting = Task { await finished.pushWhenRoom(2) }
        finished.finish()
        await waiting.value

        let cancelled = InputQueue<Int>(capacity: 1)
        await cancelled.pushWhenRoom(1)
        let cancelledProducer = Task { await cancelled.pushWhenRoom(2) }
        cancelledProducer.cancel()
        await cancelledProducer.value
        #expect(cancelled.drain() == [1], "the cancelled push dropped its element")
    }
}
