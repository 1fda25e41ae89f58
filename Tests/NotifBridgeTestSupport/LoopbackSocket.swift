import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP socket to a server on 127.0.0.1, for tests that play a peer below any client
/// library: one that holds a connection and sends nothing, or sends bytes no client would. The
/// socket is closed when the value goes away.
public final class LoopbackSocket: Sendable {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    /// Writes `bytes`; a peer that has gone away is not an error here (tests check for that
    /// with ``closedByPeer(within:)``).
    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads what the server sends until `done` holds for all of it, the server closes, or
    /// `wait` has passed; returns what was read. Polls like ``closedByPeer(within:)``.
    public func read(within wait: Duration, until done: ([UInt8]) -> Bool) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + wait
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !done(received), ContinuousClock.now < deadline {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || errno != EAGAIN {
                break
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        return received
    }

    /// Whether the server closes its end within `wait`: a read sees end of file or a reset.
    /// Whatever the server sends before that is read and dropped. Polls without blocking and
    /// sleeps between polls, so the wait holds no thread of the shared pool, which every other
    /// test of the run needs (see ``TestWait``).
    public func closedByPeer(within wait: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + wait
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) == 1, recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) <= 0 {
                return true
            }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit {
        Glibc.close(descriptor)
    }
}
