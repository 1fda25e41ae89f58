import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket
import NotifBridgeTestSupport
import Synchronization

/// Headless Chromium from Debian's packages (`chromium-headless-shell` or `chromium`), driven
/// over the DevTools protocol: what a person's browser does with the dashboard, for real.
final class Chromium: Sendable {
    /// The browser to use: `NOTIFBRIDGE_CHROMIUM`, else the binary of the first of Debian's two packages found.
    static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["NOTIFBRIDGE_CHROMIUM"], !path.isEmpty { return path }
        // Debian's /usr/bin entries are scripts that start the browser as their child; the
        // binaries themselves can be stopped.
        let candidates = ["/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium", "/usr/bin/chromium-headless-shell", "/usr/bin/chromium"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process: Process
    let profile: TemporaryDirectory
    let port: Int

    private init(process: Process, profile: TemporaryDirectory, port: Int) {
        self.process = process
        self.profile = profile
        self.port = port
    }

    /// Starts the browser with an empty profile and waits (up to 30 s) for its DevTools port.
    static func launch(width: Int = 1280, height: Int = 860) async throws -> Chromium {
        guard let executable else { throw Failure(description: "no chromium-headless-shell or chromium installed") }
        let profile = try TemporaryDirectory("chromium")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars", "--disable-extensions",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=ws://127.0.0.1", "--user-data-dir=\(profile.path)",
            "--window-size=\(width),\(height)", "about:blank",
        ]
        let logPath = profile.path + "/chromium.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = log ?? FileHandle.nullDevice
        process.standardError = log ?? FileHandle.nullDevice
        try process.run()
        let portFile = profile.path + "/DevToolsActivePort"
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let first = text.split(separator: "\n").first, let port = Int(first) {
                return Chromium(process: process, profile: profile, port: port)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        kill(process.processIdentifier, SIGKILL)
        let said = (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
        profile.remove()
        throw Failure(description: "\(executable) did not open its DevTools port within 30 s; it said: \(said)")
    }

    /// The DevTools WebSocket of the browser's first page.
    func pageURL() async throws -> String {
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/json/list")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let targets = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [[String: Any]] ?? []
        guard let page = targets.first(where: { $0["type"] as? String == "page" }), let url = page["webSocketDebuggerUrl"] as? String else {
            throw Failure(description: "the browser lists no page")
        }
        return url
    }

    /// SIGKILL: a test process may ignore SIGTERM (signal handlers installed through Dispatch
    /// set it to SIG_IGN), and its children inherit that.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        profile.remove()
    }
}

/// One DevTools session: commands numbered, each answer matched to its command by number.
final class DevTools: Sendable {
    private struct Pending {
        var next = 0
        var waiting: [Int: CheckedContinuation<Data, any Error>] = [:]
        var closed = false
    }

    private let pending = Mutex(Pending())
    private let outgoing: AsyncStream<String>.Continuation
    private let messages: AsyncStream<String>

    private init() {
        (messages, outgoing) = AsyncStream.makeStream(of: String.self)
    }

    /// Connects to `url` and runs `body` with the session; closes it when `body` returns.
    static func session<T: Sendable>(_ url: String, _ body: @escaping @Sendable (DevTools) async throws -> T) async throws -> T {
        let devTools = DevTools()
        let result = Mutex<Result<T, any Error>?>(nil)
        let logger = Logger(label: "test.devtools", factory: { _ in SwiftLogNoOpLogHandler() })
        _ = try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 24), logger: logger) { inbound, outbound, _ in
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in devTools.messages { try await outbound.write(.text(text)) }
                }
                group.addTask {
                    defer { devTools.failAll() }
                    for try await message in inbound.messages(maxSize: 1 << 26) {
                        if case .text(let text) = message { devTools.received(Data(text.utf8)) }
                    }
                }
                do {
                    let value = try await body(devTools)
                    result.withLock { $0 = .success(value) }
                } catch {
                    result.withLock { $0 = .failure(error) }
                }
                // The browser answers the close, which ends the reader; the writer ends with its stream.
                devTools.outgoing.finish()
                try? await outbound.close(.normalClosure, reason: nil)
                group.cancelAll()
            }
        }
        guard let outcome = result.withLock({ $0 }) else { throw Chromium.Failure(description: "the DevTools connection ended early") }
        return try outcome.get()
    }

    /// Sends a command and returns its `result` object as JSON.
    @discardableResult
    func send(_ method: String, _ params: [String: any Sendable] = [:]) async throws -> [String: Any] {
        let data = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            let id: Int? = pending.withLock { pending in
                guard !pending.closed else { return nil }
                pending.next += 1
                pending.waiting[pending.next] = continuation
                return pending.next
            }
            guard let id else {
                continuation.resume(throwing: Chromium.Failure(description: "the DevTools connection is closed"))
                return
            }
            do {
                let command = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params] as [String: Any])
                outgoing.yield(String(decoding: command, as: UTF8.self))
            } catch {
                pending.withLock { _ = $0.waiting.removeValue(forKey: id) }
                continuation.resume(throwing: error)
            }
        }
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        if let error = answer["error"] as? [String: Any] {
            throw Chromium.Failure(description: "\(method): \(error["message"] as? String ?? "failed")")
        }
        return answer["result"] as? [String: Any] ?? [:]
    }

    /// Evaluates JavaScript in the page and returns its value (JSON-compatible values only).
    func evaluate(_ expression: String) async throws -> Any? {
        let result = try await send("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] as? [String: Any] {
            throw Chromium.Failure(description: "the page threw: \(exception["text"] as? String ?? "?") in \(expression)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Polls `expression` until it is true, every 50 ms for up to `timeout`.
    func waitUntil(_ what: String, _ expression: String, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await evaluate(expression) as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Chromium.Failure(description: "timed out waiting for \(what)")
    }

    /// Clicks the centre of the first element matching `selector` with the mouse, as a person would.
    func click(_ selector: String) async throws {
        let literal = String(decoding: try JSONSerialization.data(withJSONObject: selector, options: .fragmentsAllowed), as: UTF8.self)
        guard let box = try await evaluate("""
            (() => { const e = document.querySelector(\(literal)); if (!e) return null; e.scrollIntoView({block: "center"});
              const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()
            """) as? [Double], box.count == 2 else {
            throw Chromium.Failure(description: "nothing on the page matches \(selector)")
        }
        for type in ["mousePressed", "mouseReleased"] {
            try await send("Input.dispatchMouseEvent", ["type": type, "x": box[0], "y": box[1], "button": "left", "clickCount": 1])
        }
    }

    private func received(_ data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let id = object["id"] as? Int else { return }
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: data)
    }

    private func failAll() {
        let waiting = pending.withLock { pending in
            pending.closed = true
            defer { pending.waiting = [:] }
            return pending.waiting
        }
        for continuation in waiting.values { continuation.resume(throwing: Chromium.Failure(description: "the DevTools connection closed")) }
        outgoing.finish()
    }
}
