import Foundation
import Glibc
import NotifBridgeHooks
import NotifBridgeTestSupport
import Synchronization

/// Collects results delivered on runner threads.
final class ResultLog: Sendable {
    private let results = Mutex<[HookResult]>([])

    func append(_ result: HookResult) {
        results.withLock { $0.append(result) }
    }

    var all: [HookResult] { results.withLock { $0 } }
}

enum HookFixture {
    /// Writes an executable script; the file is closed before anything runs it.
    static func script(in directory: String, named name: String, _ body: String) throws -> String {
        let path = directory + "/" + name
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// The contents of every file in `directory`, in file-name order.
    static func fileContents(in directory: String) throws -> [Data] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map {
            try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))
        }
    }

    static func touch(_ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data())
    }

    /// Dead, or a zombie: a killed orphan waits for init to reap it, and some container inits
    /// never do, so "no longer running" is the property a test can rely on.
    static func processIsGone(_ pid: pid_t) -> Bool {
        if kill(pid, 0) == -1, errno == ESRCH { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(nameEnd, offsetBy: 2)] == "Z"
    }

    /// Whether `condition` comes to hold within ``TestWait/deadline``.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        (try? await TestWait.until("a condition") { condition() }) != nil
    }
}
