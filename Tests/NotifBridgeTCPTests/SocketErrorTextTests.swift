import Glibc
import NIOCore
import NotifBridgeTCP
import NotifBridgeWire
import Testing

/// What a person reads when a TCP link cannot be made or ends: the system's message and its
/// number, not NIO's call names and nested parentheses.
@Suite struct SocketErrorTextTests {
    @Test("A socket error reads as the system's message and its number, without NIO's call", arguments: [ECONNRESET, ECONNREFUSED, EPIPE])
    func ioError(code: Int32) {
        let text = socketErrorText(IOError(errnoCode: code, reason: "read(descriptor:pointer:size:)"))
        #expect(text == "\(String(cString: strerror(code))) (errno \(code))")
        #expect(!text.contains("descriptor"))
    }

    @Test("A connect timeout says how long it waited", arguments: [
        (TimeAmount.seconds(5), "no answer within 5 s"),
        (TimeAmount.milliseconds(1500), "no answer within 1500 ms"),
    ])
    func connectTimeout(amount: TimeAmount, expected: String) {
        #expect(socketErrorText(ChannelError.connectTimeout(amount)) == expected)
    }

    @Test("Any other error reads as it describes itself")
    func otherError() {
        struct Odd: Error, CustomStringConvertible { var description: String { "odd" } }
        #expect(socketErrorText(Odd()) == "odd")
    }

    @Test("A refused connection names the address and the system's message")
    func refused() async throws {
        // A port that was free a moment ago: listen on it, then close the listener.
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        try await listener.channel.close()
        let failure = await #expect(throws: TCPLink.ConnectFailure.self) {
            _ = try await TCPLink.connect(host: "127.0.0.1", port: port, limits: .default)
        }
        #expect(failure?.description == "cannot connect to the accessory at 127.0.0.1:\(port): \(String(cString: strerror(ECONNREFUSED))) (errno \(ECONNREFUSED))")
    }

    @Test("Listening fails with the reason: a port in use, an address this machine does not have")
    func listenFailures() async throws {
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        let inUse = await #expect(throws: TCPLink.ListenFailure.self) {
            _ = try await TCPLink.listen(host: "127.0.0.1", port: port, limits: .default)
        }
        #expect(inUse?.description == "cannot listen on 127.0.0.1:\(port): the port is already in use")
        try await listener.channel.close()
        // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a machine.
        let foreign = await #expect(throws: TCPLink.ListenFailure.self) {
            _ = try await TCPLink.listen(host: "192.0.2.1", port: 0, limits: .default)
        }
        #expect(foreign?.description == "cannot listen on 192.0.2.1:0: \(String(cString: strerror(EADDRNOTAVAIL))) (errno \(EADDRNOTAVAIL))")
    }
}
