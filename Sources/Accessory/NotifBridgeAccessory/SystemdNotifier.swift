import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells a supervisor what the daemon is doing, as sd_notify(3) does, without libsystemd: one
/// datagram per message to the Unix socket systemd names in `NOTIFY_SOCKET` (`Type=notify`).
/// READY=1 once peers can reach the accessory, WATCHDOG=1 at half the unit's `WatchdogSec=`,
/// STOPPING=1 when a graceful shutdown begins. Without `NOTIFY_SOCKET` it does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket's path; a leading "@" names an abstract socket (Linux).
    public let socketPath: String?
    /// How often to send WATCHDOG=1, if the unit has a watchdog.
    public let watchdogInterval: Duration?

    public init(socketPath: String?, watchdogInterval: Duration?) {
        self.socketPath = socketPath
        self.watchdogInterval = watchdogInterval
    }

    /// As systemd passes them: `NOTIFY_SOCKET`, and `WATCHDOG_USEC` for this process only
    /// (`WATCHDOG_PID`, when set, must be ours). Pings go at half the interval, as systemd advises.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        var interval: Duration?
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0,
           environment["WATCHDOG_PID"].map({ $0 == String(pid) }) ?? true {
            interval = .microseconds(usec / 2)
        }
        self.init(socketPath: path, watchdogInterval: interval)
    }

    /// Sends one message such as "READY=1"; a failure to reach the supervisor is not the
    /// daemon's to handle, so it is returned for logging and otherwise ignored.
    @discardableResult
    public func notify(_ message: String) -> (any Error)? {
        guard let socketPath else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return NotifyFailure(description: "NOTIFY_SOCKET is longer than \(capacity - 1) bytes") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return NotifyFailure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, length) }
        }
        guard sent == bytes.count else { return NotifyFailure(description: "sending to \(socketPath): \(String(cString: strerror(errno)))") }
        return nil
    }

    /// Sends WATCHDOG=1 at `watchdogInterval` until cancelled; returns at once without a watchdog.
    /// It runs beside the daemon's tasks, so a wedged process stops the pings.
    public func runWatchdog() async throws {
        guard let watchdogInterval else { return }
        while true {
            notify("WATCHDOG=1")
            try await Task.sleep(for: watchdogInterval)
        }
    }

    public struct NotifyFailure: Error, CustomStringConvertible {
        public var description: String
    }
}
