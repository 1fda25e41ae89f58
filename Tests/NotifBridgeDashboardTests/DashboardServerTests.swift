import AsyncHTTPClient
import Foundation
import GRDB
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import HTTPTypes
import HummingbirdWSClient
import NotifBridgeAccessory
import NotifBridgeControl
import NotifBridgeStore
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire
import NotifBridgeTestSupport
import NotifBridgeWebServing
import ServiceLifecycle
import Synchronization
import Testing
@testable import NotifBridgeDashboard

/// The dashboard's HTTP side on a real loopback socket: what it lets in, what it refuses and why.
@Suite("Dashboard server", .timeLimit(.minutes(1)))
struct DashboardServerTests {
    /// A dashboard over an empty store whose respond records what it was asked.
    struct Running {
        let port: Int
        let token: DashboardToken
        let asked: AsyncStream<ControlRequest>
    }

    static func withDashboard(
        store prepare: (AccessoryStore) throws -> Void = { _ in }, limits: ConnectionLimits = ConnectionLimits(maxConnections: 32),
        _ body: (Running) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory("dashboard")
        defer { directory.remove() }
        let logger = Logger(label: "test.dashboard", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try AccessoryStore(path: directory.path + "/store.sqlite")
        try prepare(store)
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let (asked, ask) = AsyncStream.makeStream(of: ControlRequest.self)
        let server = DashboardServer(
            store: store, policy: PolicyFile.default, respond: { request in ask.yield(request); return .success("sent") }, hub: DashboardHub(),
            token: token, tokenPath: directory.path + "/" + DashboardToken.fileName,
            configuration: .init(port: 0, limits: limits), logger: logger
        )
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { listening.yield($0) }).run() }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try await body(Running(port: port, token: token, asked: asked))
    }

    /// Redirects are looked at, not followed: the login's 303 is under test.
    private static let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    static func request(
        _ running: Running, _ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(running.port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers, String(buffer: bytes))
    }

    static func bearer(_ running: Running) -> (String, String) {
        ("Authorization", "Bearer \(running.token.value)")
    }

    @Test("Without the token: the list shows the login, other paths 401; the stylesheet is open")
    func tokenRequired() async throws {
        try await Self.withDashboard { running in
            let page = try await Self.request(running, "/")
            #expect(page.status == 401 && page.body.contains("dashboard-token"))
            #expect(try await Self.request(running, "/respond", method: .POST, body: "{}").status == 401)
            #expect(try await Self.request(running, "/file?source=a&id=b&part=source-icon").status == 401)
            #expect(try await Self.request(running, "/", headers: [("Authorization", "Bearer " + String(repeating: "0", count: 64))]).status == 401)
            #expect(try await Self.request(running, "/static/dashboard.css").status == 200)
            let open = try await Self.request(running, "/", headers: [Self.bearer(running)])
            #expect(open.status == 200)
            #expect(open.headers["Content-Security-Policy"].first?.contains("default-src 'none'") == true)
            #expect(open.headers["Referrer-Policy"].first == "same-origin")
        }
    }

    /// The cookie used to hold the token itself, so a leaked cookie opened the dashboard for good.
    @Test("The login sets an HttpOnly, SameSite=Strict cookie naming a session, not the token; it opens the pages; a wrong token does not")
    func login() async throws {
        try await Self.withDashboard { running in
            let wrong = try await Self.request(running, "/login?token=nope")
            #expect(wrong.status == 401 && wrong.body.contains("not this dashboard"))
            let right = try await Self.request(running, "/login?token=\(running.token.value)")
            #expect(right.status == 303)
            let cookie = try #require(right.headers["Set-Cookie"].first)
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            #expect(cookie.contains("Max-Age=\(DashboardSessions.lifetime.components.seconds)"))
            #expect(!cookie.contains(running.token.value))
            let value = try #require(cookie.split(separator: ";").first.map(String.init))
            #expect(try await Self.request(running, "/", headers: [("Cookie", value)]).status == 200)
            let tokenAsCookie = "\(DashboardGuard.cookieName)=\(running.token.value)"
            #expect(try await Self.request(running, "/chart", headers: [("Cookie", tokenAsCookie)]).status == 401)
            let posted = try await Self.request(running, "/login", method: .POST, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "token=\(running.token.value)")
            #expect(posted.status == 303)
            let second = try #require(posted.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
            #expect(second != value, "each login opens a session of its own")
        }
    }

    @Test("Sign out ends that session only and clears its cookie; from another origin, or without a session or the token, it is refused")
    func logout() async throws {
        try await Self.withDashboard { running in
            func signIn() async throws -> String {
                let response = try await Self.request(running, "/login?token=\(running.token.value)")
                return try #require(response.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
            }
            let mine = try await signIn(), other = try await signIn()
            #expect(try await Self.request(running, "/chart", headers: [("Cookie", mine)]).status == 200)
            // A page on another port of this machine is the same site: the cookie goes with it.
            for origin in ["http://127.0.0.1:1", "null"] {
                let forced = try await Self.request(running, "/logout", method: .POST, headers: [("Cookie", mine), ("Origin", origin)])
                #expect(forced.status == 403, "\(origin)")
            }
            #expect(try await Self.request(running, "/chart", headers: [("Cookie", mine)]).status == 200)
            let out = try await Self.request(running, "/logout", method: .POST, headers: [("Cookie", mine), ("Origin", "http://127.0.0.1:\(running.port)")])
            #expect(out.status == 303 && out.headers["Location"].first == "/login")
            #expect(out.headers["Set-Cookie"].first?.contains("Max-Age=0") == true)
            #expect(try await Self.request(running, "/chart", headers: [("Cookie", mine)]).status == 401)
            #expect(try await Self.request(running, "/chart", headers: [("Cookie", other)]).status == 200)
            #expect(try await Self.request(running, "/logout", method: .POST).status == 401)
        }
    }

    @Test("A Host that is not a loopback name is refused, as a rebound DNS name would send", arguments: [
        ("127.0.0.1:7421", 200), ("localhost:7421", 200), ("[::1]:7421", 200), ("attacker.example:7421", 421), ("127.0.0.1.attacker.example", 421),
        ("127.0.0.1", 200), ("127.0.0.1:7421@attacker.example", 421), ("127.0.0.1:", 421), ("[::1]x", 421), ("[::1", 421),
    ])
    func hostChecked(host: String, status: Int) async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, "/", headers: [Self.bearer(running), ("Host", host)])
            #expect(response.status == status)
        }
    }

    @Test("Respond: JSON from this origin is carried out; another origin, another type or a list is refused")
    func respond() async throws {
        try await Self.withDashboard { running in
            let json = ("Content-Type", "application/json")
            let body = #"{"op":"action","source":"com.apple.MobileSMS","id":"m1","action":"like"}"#
            let sent = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json], body: body)
            #expect(sent.status == 200 && sent.body.contains(#""ok":true"#))
            var asked = running.asked.makeAsyncIterator()
            #expect(await asked.next() == ControlRequest(op: .action, source: "com.apple.MobileSMS", id: "m1", action: "like"))

            let elsewhere = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json, ("Origin", "http://attacker.example")], body: body)
            #expect(elsewhere.status == 403)
            let form = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), ("Content-Type", "text/plain")], body: body)
            #expect(form.status == 415)
            let list = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json], body: #"{"op":"list"}"#)
            #expect(list.status == 422 && list.body.contains("not an action"))
            let garbage = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json], body: "{")
            #expect(garbage.status == 422)
            // A hand-made request's mistake is named by its place, without the decoder's internals.
            let operations = ControlRequest.Operation.allCases.map(\.rawValue).joined(separator: ", ")
            for (request, reason) in [
                ("{}", "op is required"), (#"{"op":"fly"}"#, #"op: "fly" is not one of \#(operations)"#),
                (#"{"op":"action","source":1}"#, "source must be a string"),
            ] {
                let refused = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json], body: request)
                let message = try JSONDecoder().decode(ControlReply.self, from: Data(refused.body.utf8)).message
                #expect(refused.status == 422 && message == "not a request this page sends: \(reason)", "\(request): \(refused.body)")
                #expect(!refused.body.contains("CodingKeys") && !refused.body.contains("Debug description"), "\(refused.body)")
            }
            let tooLong = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), json], body: String(repeating: " ", count: DashboardServer.maxRequestBody + 1))
            #expect(tooLong.status == 413)
        }
    }

    @Test("Search text and app filter at their limits and one past", arguments: [
        ("q", ListQuery.maxTextLength, 200), ("q", ListQuery.maxTextLength + 1, 400), ("app", ListQuery.maxAppLength, 200), ("app", ListQuery.maxAppLength + 1, 400),
    ])
    func queryLimits(name: String, length: Int, status: Int) async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, "/?\(name)=\(String(repeating: "a", count: length))", headers: [Self.bearer(running)])
            #expect(response.status == status, "\(response.body)")
        }
    }

    @Test("Sockets that send nothing hold the connection slots only until the first-bytes timeout; a request waits, then is served")
    func connectionCap() async throws {
        try await Self.withDashboard(limits: ConnectionLimits(maxConnections: 2, firstBytesTimeout: .seconds(1))) { running in
            // More than the cap plus what one accept batch can take.
            let idle = try (0..<10).map { _ in try LoopbackSocket(port: running.port) }
            defer { withExtendedLifetime(idle) {} }
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(running.port)/static/dashboard.css")
            let started = ContinuousClock.now
            let response = try await Self.client.execute(request, timeout: .seconds(20))
            #expect(response.status.code == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(900), "served before the idle sockets timed out: the cap did not hold")
            for connection in idle {
                #expect(try await connection.closedByPeer(within: TestWait.deadline), "the server closed every socket that sent nothing")
            }
        }
    }

    static let hostile = #"<img src=x onerror="alert(1)">&amp; "quoted" 'single'"#

    /// One stored notification with hostile text, a PNG icon and an attachment of a type no
    /// browser should show.
    private static func storeOne(_ store: AccessoryStore) throws {
        try storeNotification(store) {
            $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "m&1")
            $0.sourceName = "Messages"
            $0.title = hostile
            $0.body = .with { $0.runs = [.with { $0.text = hostile }] }
            $0.sourceIcon = .with { $0.uniformType = "public.png"; $0.data = Data([0x89, 0x50, 0x4E, 0x47]) }
            $0.attachments = [.with { $0.uniformType = "public.svg-image"; $0.data = Data("<svg onload=alert(1)/>".utf8) }]
        }
    }

    /// Stores one notification, as the first event of an exchange.
    static func storeNotification(_ store: AccessoryStore, sequence: UInt64 = 1, _ fill: (inout Notifbridge_V1_Notification) -> Void) throws {
        let parameters = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "dashboard", encapsulatedKey: Data([0]))
        try store.saveExchange(parameters, keyID: [0], now: Date())
        var event = HostEvent()
        event.sequence = sequence
        event.add = .with { $0.notification = .with(fill) }
        var burst = BurstLimiter(limit: .unlimited)
        _ = try store.apply(event, exchangeID: parameters.exchangeID, now: Date(), conditions: AlertConditions(settings: .default, minuteOfDay: 720, now: .now), burst: &burst)
    }

    /// Such rows were left out of the list without a word.
    @Test("A stored row that cannot be read back is counted on the list page; the others are listed")
    func damagedRow() async throws {
        try await Self.withDashboard(store: { store in
            try Self.storeNotification(store) {
                $0.id = WireNotificationID(source: "com.example.chat", notification: "c1")
                $0.title = "Readable"
            }
            try Self.storeNotification(store, sequence: 2) {
                $0.id = WireNotificationID(source: "com.example.chat", notification: "c2")
                $0.title = "Damaged"
            }
            let database = try DatabaseQueue(path: store.path)
            try database.write { try $0.execute(sql: "UPDATE notification SET payload = x'deadbeef' WHERE notification_id = 'c2'") }
            try database.close()
        }) { running in
            let list = try await Self.request(running, "/", headers: [Self.bearer(running)]).body
            #expect(list.contains("Readable"))
            #expect(!list.contains("Damaged"))
            #expect(list.contains("1 stored notification(s) cannot be read back (the store is damaged there) and are not shown."), "\(list)")
        }
    }

    @Test("Peer text is escaped in the list and the detail; icons are served as images, other files only as downloads")
    func storedNotification() async throws {
        try await Self.withDashboard(store: Self.storeOne) { running in
            let escaped = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp; &quot;quoted&quot; &#39;single&#39;"
            for path in ["/", "/notification?source=com.apple.MobileSMS&id=m%261"] {
                let page = try await Self.request(running, path, headers: [Self.bearer(running)])
                #expect(page.status == 200)
                #expect(page.body.contains(escaped), "\(path)")
                #expect(!page.body.contains("<img src=x"), "\(path)")
                #expect(!page.body.contains("cannot be read back"), "no damaged row, no note: \(path)")
            }
            let query = "source=com.apple.MobileSMS&id=m%261"
            let icon = try await Self.request(running, "/file?\(query)&part=source-icon", headers: [Self.bearer(running)])
            #expect(icon.status == 200 && icon.headers["Content-Type"].first == "image/png")
            #expect(icon.headers["Content-Security-Policy"].first == "default-src 'none'; sandbox")
            let svg = try await Self.request(running, "/file?\(query)&part=attachment-0", headers: [Self.bearer(running)])
            #expect(svg.status == 200 && svg.headers["Content-Type"].first == "application/octet-stream")
            #expect(svg.headers["Content-Disposition"].first == "attachment")
            #expect(try await Self.request(running, "/file?\(query)&part=attachment-1", headers: [Self.bearer(running)]).status == 404)
            #expect(try await Self.request(running, "/file?\(query)&part=context-icon", headers: [Self.bearer(running)]).status == 404)
            let filtered = try await Self.request(running, "/?app=com.apple.mobilemail", headers: [Self.bearer(running)])
            #expect(filtered.body.contains("No notifications match"))
            let searched = try await Self.request(running, "/?q=QUOTED", headers: [Self.bearer(running)])
            #expect(searched.body.contains(escaped))
        }
    }

    @Test("A file of a notification that is not stored, or a part that does not exist, is a clear 4xx", arguments: [
        ("/file?source=a&id=b&part=source-icon", 404), ("/file?part=source-icon", 400), ("/notification?source=a&id=b", 404), ("/notification", 400),
    ])
    func missing(path: String, status: Int) async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, path, headers: [Self.bearer(running)])
            #expect(response.status == status, "\(response.body)")
        }
    }
}

extension DashboardServerTests {
    /// What a person who opens a wrong address sees: a page in the dashboard's look with the
    /// reason, escaped, and the way back; the script's POSTs keep their JSON.
    @Test("A page that cannot be shown is an HTML page saying why, with the status kept", arguments: [
        ("/nope", 404, "there is no page /nope on this dashboard"),
        ("/%3Cscript%3Ealert(1)%3C/script%3E", 404, "there is no page /&lt;script&gt;alert(1)&lt;/script&gt; on this dashboard"),
        ("/notification", 400, "source and id are required"),
        ("/notification?source=a&id=b", 404, "no such notification on this accessory"),
        ("/chart/more", 404, "there is no page /chart/more on this dashboard"),
        ("/live", 400, "/live is a WebSocket: send an upgrade request"),
    ])
    func errorPages(path: String, status: Int, message: String) async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, path, headers: [Self.bearer(running)])
            #expect(response.status == status)
            #expect(response.headers["Content-Type"].first == "text/html; charset=utf-8")
            #expect(response.body.contains("<p class=\"problem\" dir=\"auto\">\(message)</p>"), "\(response.body)")
            #expect(response.body.contains(#"<a href="/">Back to the notifications</a>"#))
            #expect(!response.body.contains("<script>alert"))
            #expect(response.headers["Content-Security-Policy"].first == SecurityHeaders.policy)
        }
    }

    /// An unclosed right-to-left override in an app's name or a title must not reorder the text
    /// beside it: each peer value is an isolate (`dir="auto"` or `<bdi>`).
    @Test("Peer text is isolated for bidi in the list and the detail")
    func bidiIsolated() async throws {
        try await Self.withDashboard(store: { store in
            try Self.storeNotification(store) {
                $0.id = WireNotificationID(source: "com.example.bank", notification: "b1")
                $0.sourceName = "Bank\u{202E}"
                $0.title = "Pay \u{202E}elif.exe"
                $0.body = .with { $0.runs = [.with { $0.text = "\u{202E}body" }] }
            }
        }) { running in
            let list = try await Self.request(running, "/", headers: [Self.bearer(running)]).body
            #expect(list.contains("<span class=\"app\" dir=\"auto\">Bank\u{202E}</span>"), "\(list)")
            #expect(list.contains("dir=\"auto\">Pay \u{202E}elif.exe</a>"), "\(list)")
            #expect(list.contains("<p class=\"body\" dir=\"auto\">\u{202E}body</p>"), "\(list)")
            let detail = try await Self.request(running, "/notification?source=com.example.bank&id=b1", headers: [Self.bearer(running)]).body
            #expect(detail.contains("<dd><bdi>Bank\u{202E}</bdi> <code dir=\"auto\">com.example.bank</code></dd>"), "\(detail)")
        }
    }

    @Test("Without the token, a page other than the list says where the token is, as a page")
    func unauthorizedPage() async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, "/chart")
            #expect(response.status == 401)
            #expect(response.body.contains("the dashboard&#39;s token is required") || response.body.contains("the dashboard's token is required"), "\(response.body)")
        }
    }

    @Test("The script's requests keep JSON errors")
    func scriptErrorsStayJSON() async throws {
        try await Self.withDashboard { running in
            let response = try await Self.request(running, "/respond", method: .POST, headers: [Self.bearer(running), ("Content-Type", "text/plain")], body: "{}")
            #expect(response.status == 415)
            #expect(response.headers["Content-Type"].first == "application/json; charset=utf-8")
        }
    }
}

/// The live feed's upgrade is guarded as the pages are.
@Suite("Dashboard live feed", .timeLimit(.minutes(1)))
struct DashboardLiveTests {
    @Test("The WebSocket upgrade needs the token and a page of this origin", arguments: [
        ([String: String](), false), (["Authorization": "bearer"], true), (["Authorization": "bearer", "Origin": "http://attacker.example"], false),
    ])
    func guarded(headers: [String: String], opens: Bool) async throws {
        let directory = try TemporaryDirectory("dashboard-live")
        defer { directory.remove() }
        let logger = Logger(label: "test.dashboard", factory: { _ in SwiftLogNoOpLogHandler() })
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let server = DashboardServer(
            store: try AccessoryStore(path: directory.path + "/store.sqlite"), policy: PolicyFile.default, respond: { _ in .success("sent") },
            hub: DashboardHub(), token: token, tokenPath: directory.path + "/" + DashboardToken.fileName, configuration: .init(port: 0), logger: logger
        )
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { listening.yield($0) }).run() }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        var fields = HTTPFields()
        for (name, value) in headers {
            fields[HTTPField.Name(name)!] = value == "bearer" ? "Bearer \(token.value)" : value
        }
        let opened = (try? await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/live", configuration: .init(additionalHeaders: fields), logger: logger) { _, outbound, _ in
            try await outbound.close(.normalClosure, reason: nil)
        }) != nil
        #expect(opened == opens)
    }

    /// Signing out ended the session for new requests, but an open page's feed went on sending
    /// notification text.
    @Test("An open feed is closed (4001) at the first update after its session is signed out, and sends nothing more")
    func signedOutFeedCloses() async throws {
        let directory = try TemporaryDirectory("dashboard-live-signout")
        defer { directory.remove() }
        let logger = Logger(label: "test.dashboard", factory: { _ in SwiftLogNoOpLogHandler() })
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let hub = DashboardHub()
        let server = DashboardServer(
            store: try AccessoryStore(path: directory.path + "/store.sqlite"), policy: PolicyFile.default, respond: { _ in .success("sent") },
            hub: hub, token: token, tokenPath: directory.path + "/" + DashboardToken.fileName, configuration: .init(port: 0), logger: logger
        )
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { listening.yield($0) }).run() }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let cookie = server.guardian.sessions.open()
        var fields = HTTPFields()
        fields[.cookie] = "\(DashboardGuard.cookieName)=\(cookie)"
        let received = Mutex<[String]>([])
        let closeFrame = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/live", configuration: .init(additionalHeaders: fields), logger: logger) { inbound, _, _ in
            // The server subscribes after the upgrade: an update before that reaches no page.
            while hub.openPages == 0 { try await Task.sleep(for: .milliseconds(10)) }
            hub.present(.connected(peer: "before"))
            var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            if case .text(let text)? = try await messages.next() { received.withLock { $0.append(text) } }
            server.guardian.sessions.close(Substring(cookie))
            hub.present(.connected(peer: "after"))
            while let message = try await messages.next() {
                if case .text(let text) = message { received.withLock { $0.append(text) } }
            }
        }
        #expect(received.withLock { $0.count } == 1, "\(received.withLock { $0 })")
        #expect(received.withLock { $0.first?.contains("before") } == true)
        #expect(closeFrame?.closeCode == .unknown(4001))
    }
}
