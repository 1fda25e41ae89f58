import Glibc
import NIOCore
@testable import NotifBridgeHost
import Testing

/// The phone's "link closed: connection failed: …" line, from NIO's socket errors.
@Suite struct SocketErrorTextTests {
    @Test("A socket error reads as the system's message and its number, without NIO's call", arguments: [ECONNRESET, ECONNREFUSED, EPIPE])
    func ioError(code: Int32) {
        let text = socketErrorText(IOError(errnoCode: code, reason: "read(descriptor:pointer:size:)"))
        #expect(text == "\(String(cString: strerror(code))) (errno \(code))")
        #expect(!text.contains("descriptor"))
    }

    @Test("Any other error reads as it describes itself")
    func otherError() {
        struct Odd: Error, CustomStringConvertible { var description: String { "odd" } }
        #expect(socketErrorText(Odd()) == "odd")
    }
}
