import NotifBridgeGATT
import NotifBridgeWire
import Testing

/// The transport extension's write queue, driven as CoreBluetooth's callbacks would.
@Suite("Central write queue")
struct CentralWriteQueueTests {
    typealias Queue = CentralWriteQueue<Int>

    private static func message(_ length: Int) -> [UInt8] { (0..<length).map { UInt8(truncatingIfNeeded: $0) } }

    /// Acknowledges every write until the queue goes quiet; returns the chunks and completions.
    private static func run(_ queue: inout Queue, _ first: [Queue.Effect]) -> (chunks: [[UInt8]], done: [Int: TransportOutcome]) {
        var effects = first, chunks: [[UInt8]] = [], done: [Int: TransportOutcome] = [:]
        while !effects.isEmpty {
            var next: [Queue.Effect] = []
            for effect in effects {
                switch effect {
                case .write(let chunk):
                    chunks.append(chunk)
                    next += queue.wrote()
                case .completed(let token, let outcome):
                    done[token] = outcome
                }
            }
            effects = next
        }
        return (chunks, done)
    }

    @Test("Chunk length from the stack's maximum write length, clamped to 20…510", arguments: [
        (19, 20), (20, 20), (21, 21), (182, 182), (509, 509), (510, 510), (511, 510), (512, 510),
    ])
    func chunkSizing(maximum: Int, expected: Int) {
        #expect(GATTProfile.chunkLength(forMaximumValueLength: maximum) == expected)
        var queue = Queue()
        _ = queue.opened(maximumWriteLength: maximum)
        #expect(queue.chunkLength == expected)
    }

    @Test("A message that fits one chunk goes in one write; one byte more takes two", arguments: [(18, 1), (19, 2)])
    func framingBoundary(length: Int, writes: Int) {
        var queue = Queue()
        _ = queue.opened(maximumWriteLength: 20)
        let (chunks, done) = Self.run(&queue, queue.enqueue(Self.message(length), token: 1))
        #expect(chunks.count == writes)
        #expect(chunks.allSatisfy { $0.count <= 20 })
        #expect(done == [1: .sent])
    }

    @Test("Messages wait for a link, then go in order with message ids from 0")
    func waitsForLink() {
        var queue = Queue()
        #expect(queue.enqueue(Self.message(5), token: 1).isEmpty)
        #expect(queue.enqueue(Self.message(5)).isEmpty)
        #expect(queue.count == 2)
        let (chunks, done) = Self.run(&queue, queue.opened(maximumWriteLength: 182))
        #expect(chunks.map { $0[1] } == [0, 1], "message ids start at 0 on the link")
        #expect(done == [1: .sent])
        #expect(queue.count == 0)
    }

    @Test("One write at a time: the next chunk waits for the last one's acknowledgement")
    func oneWriteAtATime() {
        var queue = Queue()
        _ = queue.opened(maximumWriteLength: 20)
        let first = queue.enqueue(Self.message(50), token: 1)
        #expect(first.count == 1)
        #expect(queue.enqueue(Self.message(5), token: 2).isEmpty, "a write is outstanding")
        #expect(queue.wrote() == [.write(Array([0x00, 0x00] + Self.message(50)[14..<32]))])
    }

    @Test("The queue holds its limit of messages; the one past it fails at once", arguments: [1, 64])
    func queueLimit(limit: Int) {
        var queue = Queue(maxQueuedMessages: limit)
        for token in 0..<limit {
            #expect(queue.enqueue(Self.message(5), token: token).isEmpty)
        }
        #expect(queue.enqueue(Self.message(5), token: limit) == [.completed(limit, .failed)])
        #expect(queue.count == limit)
    }

    @Test("A refused write fails the message being written and everything waiting, and ends the link")
    func writeFailure() {
        var queue = Queue()
        _ = queue.opened(maximumWriteLength: 20)
        _ = queue.enqueue(Self.message(50), token: 1)
        _ = queue.enqueue(Self.message(5), token: 2)
        _ = queue.enqueue(Self.message(5))
        #expect(queue.wrote(failed: true) == [.completed(1, .failed), .completed(2, .failed)])
        #expect(!queue.isOpen)
        #expect(queue.count == 0)
    }

    @Test("A link that drops fails what waits with the outcome given")
    func closedOutcome() {
        var queue = Queue()
        _ = queue.enqueue(Self.message(5), token: 7)
        #expect(queue.closed(outcome: .unavailable) == [.completed(7, .unavailable)])
        #expect(queue.wrote().isEmpty, "no write was outstanding")
    }

    @Test("An MTU change applies to messages framed after it")
    func mtuChange() {
        var queue = Queue()
        _ = queue.opened(maximumWriteLength: 20)
        let first = queue.enqueue(Self.message(30), token: 1)
        queue.maximumWriteLengthChanged(182)
        let (chunks, done) = Self.run(&queue, first + queue.enqueue(Self.message(30), token: 2))
        #expect(chunks.count == 3, "the first message keeps 20-byte chunks (2), the second fits one 182-byte chunk")
        #expect(done == [1: .sent, 2: .sent])
    }
}
