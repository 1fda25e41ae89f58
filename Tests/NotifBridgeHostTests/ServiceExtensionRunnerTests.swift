import Foundation
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

/// Real `/bin/sh -c` commands playing a service extension, against the APNs fixtures.
@Suite("Service extension commands", .timeLimit(.minutes(1)))
struct ServiceExtensionRunnerTests {
    static let context = APNsPayload.Context(source: "com.example.app", sourceName: "Example", id: "n1")

    /// The payload's bytes and what iOS maps from them.
    static func payload(_ name: String) throws -> (APNsPayload.Mapped, Data) {
        let data = try TestFixtures.data("apns/\(name).apns.json")
        return (try APNsPayload.map(data, context: context), data)
    }

    @Test("A rewrite printed within the deadline is forwarded; the command got the payload on stdin")
    func rewriteWithinDeadline() async throws {
        let directory = try TemporaryDirectory("extension")
        defer { directory.remove() }
        let (mapped, data) = try Self.payload("secret-message")
        let runner = ServiceExtensionRunner(command: #"cat > '\#(directory.path)/stdin.json'; echo "decrypting" >&2; printf '{"body": "Meet me at 7 🌅"}'"#)
        let (result, outcome) = await runner.process(mapped, payload: data)
        #expect(outcome == .rewritten(changed: ["body"]))
        #expect(result.notification.body == "Meet me at 7 🌅")
        #expect(result.notification.title == "Secret Message!")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(directory.path)/stdin.json")) == data)
    }

    @Test("A non-zero exit forwards the original, whatever was printed")
    func nonZeroExit() async throws {
        let (mapped, data) = try Self.payload("secret-message")
        let (result, outcome) = await ServiceExtensionRunner(command: #"printf '{"body": "half done"}'; exit 3"#).process(mapped, payload: data)
        #expect(outcome == .original(.exited(3)))
        #expect(result.notification == mapped.notification)
    }

    @Test("Garbage on stdout forwards the original")
    func garbage() async throws {
        let (mapped, data) = try Self.payload("secret-message")
        let (result, outcome) = await ServiceExtensionRunner(command: "echo 'decrypted: Meet me at 7 ☠'").process(mapped, payload: data)
        #expect(outcome == .original(.invalidOutput("it is not a JSON object")))
        #expect(result.notification == mapped.notification)
    }

    @Test("Output beyond the limit is read, dropped, and the original forwarded")
    func tooMuchOutput() async throws {
        let (mapped, data) = try Self.payload("secret-message")
        let command = "head -c \(ServiceExtension.maxOutputLength + 1) /dev/zero | tr '\\0' ' '"
        let (result, outcome) = await ServiceExtensionRunner(command: command).process(mapped, payload: data)
        #expect(outcome == .original(.invalidOutput("more than \(ServiceExtension.maxOutputLength) bytes")))
        #expect(result.notification == mapped.notification)
    }

    @Test("A command past its deadline is killed with its process group, and the original forwarded")
    func missedDeadline() async throws {
        let directory = try TemporaryDirectory("extension")
        defer { directory.remove() }
        let (mapped, data) = try Self.payload("secret-message")
        let pidFile = "\(directory.path)/child.pid"
        // 3 s for the shell to start its child and write the pid: 500 ms ran out before it had
        // on a machine busy with two fuzz soaks and a build, and there was no pid to check.
        let runner = ServiceExtensionRunner(command: "sleep 30 & echo $! > '\(pidFile)'; wait; printf '{\"body\": \"too late\"}'", deadline: .seconds(3))
        let started = ContinuousClock.now
        let (result, outcome) = await runner.process(mapped, payload: data)
        let elapsed = ContinuousClock.now - started
        #expect(outcome == .original(.timedOut(.seconds(3))))
        #expect(result.notification == mapped.notification)
        // Below the child's 30 s, so it was killed, not waited for; the margin is for a loaded
        // machine, not a speed claim.
        #expect(elapsed >= .seconds(3) && elapsed < .seconds(20), "\(elapsed)")

        let pid = try #require(Int32(String(decoding: Data(contentsOf: URL(fileURLWithPath: pidFile)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await Self.isGone(pid), "the background sleep \(pid) outlived the deadline")
    }

    @Test("Without mutable-content the command never runs")
    func notMutable() async throws {
        let directory = try TemporaryDirectory("extension")
        defer { directory.remove() }
        let marker = "\(directory.path)/ran"
        let runner = ServiceExtensionRunner(command: "touch '\(marker)'; printf '{}'")
        let (plain, plainData) = try Self.payload("critical-alarm")
        let (result, outcome) = await runner.process(plain, payload: plainData)
        #expect(outcome == .notRun)
        #expect(result.notification == plain.notification)
        #expect(!FileManager.default.fileExists(atPath: marker))

        let (secret, secretData) = try Self.payload("secret-message")
        #expect(await runner.process(secret, payload: secretData).1 == .rewritten(changed: []))
        #expect(FileManager.default.fileExists(atPath: marker), "the same command does run for mutable-content")
    }

    @Test("Examples/decrypt-service-extension.sh decodes the secret message", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/jq")))
    func decryptExample() async throws {
        let script = TestFixtures.directory.deletingLastPathComponent().appendingPathComponent("Examples/decrypt-service-extension.sh").path
        let (mapped, data) = try Self.payload("secret-message")
        let (result, outcome) = await ServiceExtensionRunner(command: "'\(script)'").process(mapped, payload: data)
        #expect(outcome == .rewritten(changed: ["title", "body"]))
        #expect(result.notification.body == "Meet me at the harbour at 7 🌅 Bring the blue folder.")
        #expect(result.notification.thread == "chat-anna")
    }

    /// Polls for up to 2 s: a killed process disappears, or stays a zombie until its new parent reaps it.
    static func isGone(_ pid: Int32) async -> Bool {
        for _ in 0..<100 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if stat.split(separator: ")").last?.split(separator: " ").first == "Z" { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
