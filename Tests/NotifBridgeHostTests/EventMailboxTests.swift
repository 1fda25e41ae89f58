@testable import NotifBridgeHost
import Testing

/// The phone's event mailbox: what a peer sends of its own accord waits up to a limit, which
/// reading makes room under and each numbered message the phone sends raises by one, once.
@Suite("The phone's event mailbox")
struct EventMailboxTests {
    @Test("Limited elements: the limit, one more refused; reading and each number sent make room; others never count")
    func limit() async throws {
        let mailbox = EventMailbox<Int>(limit: 2)
        #expect(mailbox.post(1, limited: true))
        #expect(mailbox.post(2, limited: true))
        #expect(!mailbox.post(3, limited: true), "the limit is full")
        #expect(mailbox.post(4), "an element not limited is always taken")
        #expect(await mailbox.next() == 1)
        #expect(mailbox.post(5, limited: true), "reading made room")
        #expect(!mailbox.post(6, limited: true))
        mailbox.makeRoom(forAnswerTo: 500)
        #expect(mailbox.post(7, limited: true), "room for one answer to a message sent")
        #expect(!mailbox.post(8, limited: true))
        mailbox.makeRoom(forAnswerTo: 500)
        #expect(!mailbox.post(9, limited: true), "a message sent again makes no more room")
        mailbox.makeRoom(forAnswerTo: 502)
        #expect(mailbox.post(10, limited: true))
        #expect(mailbox.post(11, limited: true), "501 and 502: two more numbers sent")
        #expect(!mailbox.post(12, limited: true))
        var read: [Int] = []
        mailbox.finish()
        while let next = await mailbox.next() { read.append(next) }
        #expect(read == [2, 4, 5, 7, 10, 11])
    }
}
