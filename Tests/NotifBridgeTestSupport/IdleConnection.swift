import Foundation
#if canImport(Glibc)
import Glibc
#endif
/// A TCP connection that sends nothing: it holds one of the server's connections.
public final class IdleConnection: Sendable {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    /// Whether the server closes its end within `wait` (a read sees end of file or a reset).
    /// Polls without blocking and sleeps between polls, so the wait holds no thread of the
    /// shared pool, which every other test of the run needs (see ``TestWait``).
    public func closedByPeer(within wait: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + wait
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) == 1 {
                var byte: UInt8 = 0
                return recv(descriptor, &byte, 1, 0) <= 0
            }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public func close() {
        _ = Glibc.close(descriptor)
    }
}
