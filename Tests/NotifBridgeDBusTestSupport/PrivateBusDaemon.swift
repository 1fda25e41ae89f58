import Foundation
import NotifBridgeDBus
import Testing

/// A `dbus-daemon --session` of the test's own, listening in a fresh temporary directory, so
/// tests never touch the machine's buses.
public final class PrivateBusDaemon {
    /// Where dbus-daemon is installed, or nil; tests that need it are skipped without it.
    public static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/dbus-daemon" } + ["/usr/bin/dbus-daemon"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    public static var isAvailable: Bool { executable != nil }

    public let address: DBusBusAddress
    private let process = Process()
    private let directory: URL

    public init() throws {
        let executable = try #require(Self.executable, "dbus-daemon is not installed")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("notifbridge-dbus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = Pipe()
        // The daemon's complaints (e.g. that it may not raise its fd limit) go to a log that
        // is only shown if it fails to start.
        let log = directory.appendingPathComponent("daemon.log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw DaemonFailure(output: "cannot create \(log.path)")
        }
        process.standardError = try FileHandle(forWritingTo: log)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--session", "--nofork", "--nopidfile", "--print-address=1",
            "--address=unix:path=\(directory.appendingPathComponent("bus").path)",
        ]
        process.standardOutput = output
        try process.run()
        // The daemon prints its address once it listens; EOF first means it failed to start.
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                process.waitUntilExit()
                let complaint = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(at: directory)
                throw DaemonFailure(output: String(decoding: printed, as: UTF8.self) + complaint)
            }
            printed.append(chunk)
        }
        let line = String(decoding: printed, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        address = .address(line.trimmingCharacters(in: .whitespaces))
    }

    public struct DaemonFailure: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "dbus-daemon exited before printing its address: \(output)" }
    }

    /// SIGKILL, not `terminate()`: the daemon inherits the signal mask of the test runner's
    /// worker thread, where SIGTERM is blocked.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        stop()
    }
}

/// The first element `stream` yields, or nil if none arrives within `limit`.
public func firstElement<T: Sendable>(of stream: AsyncStream<T>, within limit: Duration) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
