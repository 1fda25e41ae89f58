import NotifBridgeAccessory
import NotifBridgeControl
import Testing

/// Control-socket lines as the daemon parses them, before it looks anything up.
@Suite("Control requests")
struct ControlRequestTests {
    @Test("A line with an operation and its fields parses")
    func parses() throws {
        let request = try ControlRequest(line: #"{"op":"reply","source":"com.apple.MobileSMS","id":"msg-1","action":"reply","text":"On my way"}"#)
        #expect(request == ControlRequest(op: .reply, source: "com.apple.MobileSMS", id: "msg-1", action: "reply", text: "On my way"))
        #expect(try ControlRequest(line: #"{"op":"list"}"#) == ControlRequest(op: .list))
    }

    @Test("Anything else is refused with the operations it could have been", arguments: [
        "", "list", #"{"op":"shout"}"#, #"{"source":"x"}"#, #"{"op":"reply","text":7}"#, "[]",
    ])
    func refused(line: String) {
        #expect {
            try ControlRequest(line: line)
        } throws: { error in
            "\(error)".contains("list, action, reply, dismiss, clear")
        }
    }
}
