import Foundation
@testable import NotifBridgeHooks
import NotifBridgeTestSupport
import Testing

@Suite("Desktop notifier")
struct DesktopNotifierTests {
    /// A stand-in for notify-send that records its argv NUL-separated, since arguments may
    /// themselves contain newlines.
    private func fakeNotifySend(in directory: TemporaryDirectory) throws -> (executable: String, record: String) {
        let record = directory.path + "/argv"
        let executable = try HookFixture.script(in: directory.path, named: "notify-send", #"printf '%s\0' "$@" > "\#(record)""#)
        return (executable, record)
    }

    private func recordedArguments(_ path: String) throws -> [String] {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        return text.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test("init? returns nil when the executable is missing and resolves names on PATH")
    func resolution() throws {
        let directory = try TemporaryDirectory("notify-resolve")
        defer { directory.remove() }
        let plainFile = directory.path + "/notify-send"
        try Data("not a program".utf8).write(to: URL(fileURLWithPath: plainFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plainFile)

        #expect(DesktopNotifier(executable: "notifbridge-no-such-notify-send-\(UUID().uuidString)") == nil)
        #expect(DesktopNotifier(executable: "/nonexistent/notify-send") == nil)
        #expect(DesktopNotifier(executable: plainFile) == nil)
        #expect(DesktopNotifier(executable: directory.path) == nil)
        #expect(DesktopNotifier(executable: "sh")?.executable.hasSuffix("/sh") == true)
    }

    @Test("Notification text reaches notify-send verbatim as argv, never through a shell")
    func argvIsVerbatim() async throws {
        let directory = try TemporaryDirectory("notify-verbatim")
        defer { directory.remove() }
        let fake = try fakeNotifySend(in: directory)
        let log = ResultLog()
        let notifier = try #require(DesktopNotifier(executable: fake.executable, onResult: log.append))
        let pwned = directory.path + "/pwned"
        let summary = #"Anna "the boss" O'Neil $(touch \#(pwned)) `touch \#(pwned)`"#
        let body = "Line one;\nline two && rm -rf ~ | cat > \(pwned)\n🎉👩‍👩‍👧 ünïcödé -- --urgency=low"

        notifier.notify(appName: "Notif Bridge", summary: summary, body: body, urgency: .critical, expireTimeout: .seconds(5))
        #expect(await notifier.waitUntilIdle(timeout: TestWait.deadline))
        #expect(try recordedArguments(fake.record) == [
            "--app-name=Notif Bridge", "--urgency=critical", "--expire-time=5000", "--", summary, body,
        ])
        #expect(!FileManager.default.fileExists(atPath: pwned))
        #expect(log.all.count == 1 && log.all.first?.exitStatus == 0)
    }

    @Test("Leading dashes stay operands, body backslashes are escaped, optional parts are omitted")
    func edgeCases() async throws {
        let directory = try TemporaryDirectory("notify-edges")
        defer { directory.remove() }
        let fake = try fakeNotifySend(in: directory)
        let log = ResultLog()
        let notifier = try #require(DesktopNotifier(executable: fake.executable, onResult: log.append))

        notifier.notify(appName: "-x", summary: "--help", body: #"C:\temp\new \u1F600"#, urgency: .low, expireTimeout: nil)
        #expect(await notifier.waitUntilIdle(timeout: TestWait.deadline))
        #expect(log.all.last?.exitStatus == 0, "\(String(describing: log.all.last))")
        #expect(try recordedArguments(fake.record) == [
            "--app-name=-x", "--urgency=low", "--", "--help", #"C:\\temp\\new \\u1F600"#,
        ])

        notifier.notify(appName: "a", summary: "only a summary", body: "", urgency: .normal, expireTimeout: .milliseconds(1500))
        #expect(await notifier.waitUntilIdle(timeout: TestWait.deadline))
        #expect(try recordedArguments(fake.record) == ["--app-name=a", "--urgency=normal", "--expire-time=1500", "--", "only a summary"])
    }
}
