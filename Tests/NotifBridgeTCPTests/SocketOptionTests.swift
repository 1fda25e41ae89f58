import Foundation
import NIOCore
import NotifBridgeTCP
import NotifBridgeWire
import Testing

/// The link's sockets have TCP_NODELAY set at the TCP level, and nothing set at the socket level
/// by mistake: option 1 at SOL_SOCKET is SO_DEBUG, which only root may set, so setting it there
/// made every accept and connect of an unprivileged user fail with "Permission denied". Tests
/// run as root here, where that call succeeded; the option's value shows it.
@Suite("TCP link socket options")
struct SocketOptionTests {
    static let soDebug = ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: SO_DEBUG))

    @Test("Both ends: TCP_NODELAY on, SO_DEBUG off")
    func options() async throws {
        let listener = try await TCPLink.listen(host: "127.0.0.1", port: 0, limits: .default)
        let port = try #require(listener.channel.localAddress?.port)
        let client = try await TCPLink.connect(host: "127.0.0.1", port: port, limits: .default)
        // Each NIOAsyncChannel is used inside its executeThenClose, which finishes its writer.
        try await client.executeThenClose { _, _ in
            try await listener.executeThenClose { inbound in
                var connections = inbound.makeAsyncIterator()
                let accepted = try #require(try await connections.next())
                try await accepted.executeThenClose { _, _ in
                    for (side, channel) in [("the connecting side", client.channel), ("the accepted side", accepted.channel)] {
                        let noDelay = try await channel.getOption(ChannelOptions.tcpOption(.tcp_nodelay))
                        let debug = try await channel.getOption(Self.soDebug)
                        #expect(noDelay != 0, "\(side): TCP_NODELAY")
                        #expect(debug == 0, "\(side): SO_DEBUG")
                    }
                }
            }
        }
    }
}
