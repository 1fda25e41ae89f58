import NotifBridgeRelayCore
@testable import NotifBridgeRelayClient
import Testing

/// The accessory's pushes on its inbox connection: each gets an answer, or says why there is
/// none. A relay that answered pings but never a push left the reply waiting for ever.
@Suite("Push lane")
struct PushLaneTests {
    @Test("no connection: not connected")
    func notConnected() async {
        #expect(await PushLane().push([1]) == .notConnected)
    }

    @Test("a push goes out as a push frame, and gets the relay's answer")
    func answered() async throws {
        let lane = PushLane()
        let (frames, send) = AsyncStream.makeStream(of: [UInt8].self)
        lane.opened(send)
        async let answer = lane.push(Array("{}".utf8))
        var sent = frames.makeAsyncIterator()
        #expect(try RelayFrame(decoding: #require(await sent.next())) == .push(id: 1, body: Array("{}".utf8)))
        #expect(lane.answered(1, .noPushToken))
        #expect(await answer == .answered(.noPushToken))
        #expect(!lane.answered(1, .delivered), "answered once")
    }

    @Test("a push the relay does not answer in time ends after the answer timeout; its late answer is taken")
    func unanswered() async {
        let lane = PushLane(answerTimeout: .milliseconds(100))
        let (_, send) = AsyncStream.makeStream(of: [UInt8].self)
        lane.opened(send)
        #expect(await lane.push([1]) == .unanswered(.milliseconds(100)))
        // The relay answers pushes one at a time, each after up to 10 s with APNs: a late answer
        // is not a breach of §11.2 (it dropped the connection), but one for a push never sent is.
        #expect(lane.answered(1, .delivered))
        #expect(!lane.answered(2, .delivered))
    }

    @Test("maxWaiting pushes may wait; the one after is refused at once; a closed connection ends those waiting")
    func bounded() async {
        let lane = PushLane()
        let (_, send) = AsyncStream.makeStream(of: [UInt8].self)
        lane.opened(send)
        let waiting = (0..<PushLane.maxWaiting).map { _ in Task { await lane.push([1]) } }
        while lane.waitingCount < PushLane.maxWaiting { await Task.yield() }
        #expect(await lane.push([1]) == .tooManyWaiting(PushLane.maxWaiting))
        lane.closed()
        for push in waiting { #expect(await push.value == .connectionEnded) }
        #expect(await lane.push([1]) == .notConnected)
    }
}
