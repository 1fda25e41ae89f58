import Foundation
import Glibc
import NotifBridgeAccessory
import NotifBridgeTestSupport
import Testing

@Suite("systemd notifications (Type=notify)")
struct SystemdNotifierTests {
    @Test("The environment gives the socket and, for this process only, half the watchdog interval", arguments: [
        (["NOTIFY_SOCKET": "/run/n.sock"], "/run/n.sock", nil),
        (["NOTIFY_SOCKET": "/run/n.sock", "WATCHDOG_USEC": "2000000"], "/run/n.sock", Duration.seconds(1)),
        (["NOTIFY_SOCKET": "/run/n.sock", "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "42"], "/run/n.sock", .seconds(1)),
        (["NOTIFY_SOCKET": "/run/n.sock", "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "43"], "/run/n.sock", nil),
        (["NOTIFY_SOCKET": "/run/n.sock", "WATCHDOG_USEC": "0"], "/run/n.sock", nil),
        (["NOTIFY_SOCKET": "/run/n.sock", "WATCHDOG_USEC": "soon"], "/run/n.sock", nil),
        (["NOTIFY_SOCKET": ""], nil, nil),
        ([:], nil, nil),
    ] as [([String: String], String?, Duration?)])
    func environment(variables: [String: String], socket: String?, watchdog: Duration?) {
        let notifier = SystemdNotifier(environment: variables, pid: 42)
        #expect(notifier.socketPath == socket)
        #expect(notifier.watchdogInterval == watchdog)
    }

    /// A real datagram socket, bound where NOTIFY_SOCKET would point, and one bound in the
    /// abstract namespace ("@name").
    @Test("Messages reach the supervisor's socket, by path and in the abstract namespace", arguments: [false, true])
    func delivery(abstract: Bool) throws {
        let directory = try TemporaryDirectory("notify")
        defer { directory.remove() }
        let name = abstract ? "@notifbridge-test-\(getpid())" : directory.path + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if abstract { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let notifier = SystemdNotifier(socketPath: name, watchdogInterval: nil)
        #expect(notifier.notify("READY=1") == nil)
        #expect(notifier.notify("STOPPING=1") == nil)
        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        for _ in 0..<2 {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        #expect(received == ["READY=1", "STOPPING=1"])
    }

    @Test("Without NOTIFY_SOCKET nothing is sent and nothing fails; a socket nobody holds is an error to log")
    func absent() throws {
        #expect(SystemdNotifier(socketPath: nil, watchdogInterval: nil).notify("READY=1") == nil)
        let directory = try TemporaryDirectory("notify")
        defer { directory.remove() }
        #expect(SystemdNotifier(socketPath: directory.path + "/nobody.sock", watchdogInterval: nil).notify("READY=1") != nil)
    }
}

@Suite("The example systemd unit")
struct SystemdUnitTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/systemd/notifbridge-accessory.service").standardizedFileURL

    /// The [Service] section's settings, the last assignment of each winning as in systemd.
    static func service() throws -> [String: String] {
        var section = "", settings: [String: String] = [:]
        for line in try String(contentsOf: unit, encoding: .utf8).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("[") { section = text }
            guard section == "[Service]", !text.hasPrefix("#"), let equals = text.firstIndex(of: "=") else { continue }
            settings[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return settings
    }

    /// The terminal presenter prints every title and body on standard output; systemd would
    /// keep it in the journal. The logs, on standard error, still go there.
    @Test("Standard output, where notification text is shown, does not reach the journal")
    func noContentInTheJournal() throws {
        let settings = try Self.service()
        #expect(settings["StandardOutput"] == "null")
        #expect(settings["StandardError"] == "journal", "standard error inherits standard output's null unless told")
        #expect(settings["ExecStart"]?.contains("--json") == false, "JSON output carries the text too")
    }
}
