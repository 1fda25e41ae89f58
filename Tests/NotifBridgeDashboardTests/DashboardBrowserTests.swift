import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeControl
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeStore
import NotifBridgeTestSupport
import ServiceLifecycle
import Synchronization
import Testing
@testable import NotifBridgeDashboard

/// The dashboard in a real browser: headless Chromium loads the page, a notification the
/// simulated iPhone sends appears without a reload, hostile text stays text, and a button and an
/// inline reply pressed in the page reach the iPhone. Skipped where no Chromium is installed;
/// `.ci/run` installs it and sets NOTIFBRIDGE_TEST_BROWSER=1, under which a missing browser fails.
@Suite(
    "Dashboard in a browser",
    .enabled(if: Chromium.executable != nil || ProcessInfo.processInfo.environment["NOTIFBRIDGE_TEST_BROWSER"] != nil, "no Chromium installed"),
    .timeLimit(.minutes(3))
)
struct DashboardBrowserTests {
    static let source = "com.apple.MobileSMS"
    /// Markup a peer might send: shown as text, never run.
    static let hostileTitle = #"Anna <img src=x onerror="window.pwned=1"> Schmidt"#

    private static func message(_ id: String, title: String, body: String) -> HostNotification {
        var n = HostNotification(source: source, id: id, sourceName: "Messages", title: title, body: body, thread: "chat-anna")
        n.actions = [
            .init(id: "reply", title: "Reply", type: .textInput, placeholder: "Message"),
            .init(id: "like", title: "Like", type: .background),
            .init(id: "com.apple.dismiss", title: "Dismiss", type: .dismiss),
        ]
        return n
    }

    private static func nextResponse(_ phone: HostClient) async throws -> HostClientEvent? {
        while let event = try await phone.nextEvent(timeout: .seconds(15)) {
            if case .response = event { return event }
        }
        return nil
    }

    @Test("A notification appears live, its text escaped; a button and a reply pressed in the page reach the iPhone")
    func liveAndActions() async throws {
        let directory = try TemporaryDirectory("dashboard-browser")
        defer { directory.remove() }
        let logger = Logger(label: "test.dashboard", factory: { _ in SwiftLogNoOpLogHandler() })
        let hub = DashboardHub()
        let daemon = try AccessoryDaemon(
            configuration: AccessoryConfiguration(stateDirectory: directory.path, port: 0, suite: .xWing),
            presenter: PresenterGroup([Quiet(), hub]),
            logger: logger
        )
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let server = DashboardServer(
            store: daemon.store, policy: daemon.policy, respond: daemon.control.respond, hub: hub, token: token,
            tokenPath: directory.path + "/" + DashboardToken.fileName, configuration: .init(port: 0), logger: logger
        )
        let (accessoryPorts, accessoryListening) = AsyncStream.makeStream(of: Int.self)
        let (dashboardPorts, dashboardListening) = AsyncStream.makeStream(of: Int.self)
        let accessory = Task { try await daemon.run(onListening: { accessoryListening.yield($0) }) }
        defer { accessory.cancel() }
        let dashboard = Task { try await server.application(onListening: { dashboardListening.yield($0) }).run() }
        defer { dashboard.cancel() }
        var accessoryIterator = accessoryPorts.makeAsyncIterator()
        var dashboardIterator = dashboardPorts.makeAsyncIterator()
        let port = try #require(await accessoryIterator.next())
        let dashboardPort = try #require(await dashboardIterator.next())

        let browser = try await Chromium.launch()
        defer { browser.stop() }
        let pageURL = try await browser.pageURL()

        let session = HostSession(configuration: .init(suites: [.xWing], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID))
        _ = try await HostClient.connect(host: "127.0.0.1", port: port, session: session) { phone in
            try await phone.waitUntilEstablished()
            @Sendable func forward(_ operation: HostOperation) async throws {
                _ = try await phone.waitForReceipts([try phone.send(operation)])
            }
            var mail = HostNotification(source: "com.apple.mobilemail", id: "mail-1", sourceName: "Mail", title: "Invoice 2026-11", body: "Your invoice is ready.")
            mail.actions = [.init(id: "archive", title: "Archive", type: .background)]
            try await forward(.add(mail, .standard))
            try await forward(.add(HostNotification(source: "com.apple.mobilecal", id: "event-7", sourceName: "Calendar", title: "Dentist", body: "In 15 minutes"), .standard))

            try await DevTools.session(pageURL) { page in
                try await page.send("Page.enable")
                try await page.send("Page.navigate", ["url": "http://127.0.0.1:\(dashboardPort)/login?token=\(token.value)"])
                try await page.waitUntil("the list with its live connection", "document.getElementById('live')?.textContent === 'live' && document.querySelectorAll('#list .item').length === 2")
                // A marker that a reload would wipe.
                _ = try await page.evaluate("window.notifbridgeMarker = 42")

                try await forward(.add(Self.message("m1", title: Self.hostileTitle, body: "Lunch at 12? 🍜"), .standard))
                let item = #"document.querySelector('#list .item[data-key="com.apple.MobileSMS/m1"]')"#
                try await page.waitUntil("the new notification", "\(item) !== null")
                #expect(try await page.evaluate("window.notifbridgeMarker") as? Int == 42, "the page was not reloaded")
                #expect(try await page.evaluate("\(item).querySelector('.title').textContent") as? String == Self.hostileTitle)
                #expect(try await page.evaluate("\(item).querySelectorAll('img').length") as? Int == 0)
                #expect(try await page.evaluate("window.pwned === undefined") as? Bool == true)
                #expect(try await page.evaluate("document.querySelector('#list .item').dataset.key") as? String == "com.apple.MobileSMS/m1", "newest first")

                // An update replaces the item in place.
                try await forward(.update(Self.message("m1", title: "Anna Schmidt", body: "Lunch at 12:30? 🍜")))
                try await page.waitUntil("the update", "\(item).querySelector('.body').textContent === 'Lunch at 12:30? 🍜'")
                #expect(try await page.evaluate("document.querySelectorAll('#list .item').length") as? Int == 3)

                // A button pressed with the mouse.
                try await page.click(#"#list .item[data-key="com.apple.MobileSMS/m1"] button[data-action="like"]"#)
                guard case .response(_, "m1", "like", nil)? = try await Self.nextResponse(phone) else {
                    Issue.record("the button did not reach the iPhone")
                    return
                }
                try await page.waitUntil("the page to say it was sent", "\(item).querySelector('.result').textContent.startsWith('sent action')")

                // An inline reply typed into the page.
                try await page.click(#"#list .item[data-key="com.apple.MobileSMS/m1"] input[data-reply-for="reply"]"#)
                try await page.send("Input.insertText", ["text": "On my way 🏃"])
                try await page.click(#"#list .item[data-key="com.apple.MobileSMS/m1"] button[data-op="reply"]"#)
                guard case .response(_, "m1", "reply", "On my way 🏃")? = try await Self.nextResponse(phone) else {
                    Issue.record("the reply did not reach the iPhone")
                    return
                }
                try await page.waitUntil("the page to say the reply was sent", "\(item).querySelector('.result').textContent.startsWith('sent reply')")

                // A removal on the iPhone takes the item away.
                try await forward(.remove(source: "com.apple.mobilecal", id: "event-7"))
                try await page.waitUntil("the removal", #"document.querySelector('#list .item[data-key="com.apple.mobilecal/event-7"]') === null"#)
                #expect(try await page.evaluate("window.notifbridgeMarker") as? Int == 42, "still the same page")
                try await page.waitUntil("the chart to count the third notification", "document.getElementById('chart').textContent.includes('3 notifications, 3 alerted')")

                if let folder = ProcessInfo.processInfo.environment["NOTIFBRIDGE_SCREENSHOT_DIR"] {
                    let shot = try await page.send("Page.captureScreenshot", ["format": "png"])
                    let png = try #require((shot["data"] as? String).flatMap { Data(base64Encoded: $0) })
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                    try png.write(to: URL(fileURLWithPath: folder).appendingPathComponent("dashboard.png"))
                }

                // Without its token (the cookie gone, as when the token file is replaced), a button
                // says why it was refused rather than only "failed".
                try await page.send("Network.clearBrowserCookies")
                try await page.click(#"#list .item[data-key="com.apple.MobileSMS/m1"] button[data-action="like"]"#)
                try await page.waitUntil("the refusal's reason", "\(item).querySelector('.result').textContent.startsWith('the dashboard\\'s token is required')")
                try await page.send("Page.navigate", ["url": "http://127.0.0.1:\(dashboardPort)/login?token=\(token.value)"])
                try await page.waitUntil("the list again", "document.getElementById('live')?.textContent === 'live'")

                // A search typed with capitals matches as the server's does, whatever the case:
                // live changes to a match stay listed, and new matches appear.
                try await page.send("Page.navigate", ["url": "http://127.0.0.1:\(dashboardPort)/?q=ANNA"])
                try await page.waitUntil("the searched list", "document.getElementById('live')?.textContent === 'live' && document.querySelectorAll('#list .item').length === 1")
                try await forward(.update(Self.message("m1", title: "Anna Schmidt", body: "Lunch at 13:00?")))
                try await page.waitUntil("the update, still listed", "\(item)?.querySelector('.body').textContent === 'Lunch at 13:00?'")
                try await forward(.add(Self.message("m2", title: "anna", body: "Running late"), .standard))
                try await page.waitUntil("the new match", #"document.querySelector('#list .item[data-key="com.apple.MobileSMS/m2"]') !== null"#)
                #expect(try await page.evaluate("document.querySelectorAll('#list .item').length") as? Int == 2)

                // Sign out: the login page, and the list stays closed to this browser.
                try await page.click("header .signout button")
                try await page.waitUntil("the login page", "document.querySelector('main.login') !== null")
                try await page.send("Page.navigate", ["url": "http://127.0.0.1:\(dashboardPort)/"])
                try await page.waitUntil("the login page again", "document.querySelector('main.login') !== null && document.getElementById('list') === null")
            }
        }
    }

    /// Starts a dashboard over `store` with `token` on `port` (0: any), and returns its port
    /// and the task serving it.
    private static func serve(_ store: AccessoryStore, token: DashboardToken, port: Int, directory: String) async throws -> (Int, Task<Void, any Error>) {
        let server = DashboardServer(
            store: store, policy: PolicyFile.default, respond: { _ in .success("sent") }, hub: DashboardHub(), token: token,
            tokenPath: directory + "/" + DashboardToken.fileName, configuration: .init(port: port),
            logger: Logger(label: "test.dashboard", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.application(onListening: { listening.yield($0) }).run() }
        var iterator = ports.makeAsyncIterator()
        return (try #require(await iterator.next()), task)
    }

    /// Sessions were remembered in memory, so a restart signed every page out; a page whose
    /// session had ended kept trying its live connection, refused without a reason, for ever.
    @Test("An open page's session outlives the dashboard's restart; after a restart with a new token the page goes to the login")
    func sessionAcrossRestarts() async throws {
        let directory = try TemporaryDirectory("dashboard-restart")
        defer { directory.remove() }
        let store = try AccessoryStore(path: directory.path + "/accessory.sqlite")
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let (port, first) = try await Self.serve(store, token: token, port: 0, directory: directory.path)
        let server = Mutex(first)
        defer { server.withLock { $0.cancel() } }
        /// Stops the dashboard, waits for the page to see its live connection go, and starts
        /// it again on the same port.
        @Sendable func restart(with token: DashboardToken, _ page: DevTools) async throws {
            let old = server.withLock { $0 }
            old.cancel()
            _ = try? await old.value
            try await page.waitUntil("the page to go offline", "document.getElementById('live')?.textContent === 'offline'")
            let (_, next) = try await Self.serve(store, token: token, port: port, directory: directory.path)
            server.withLock { $0 = next }
        }

        let browser = try await Chromium.launch()
        defer { browser.stop() }
        try await DevTools.session(try await browser.pageURL()) { page in
            try await page.send("Page.enable")
            try await page.send("Page.navigate", ["url": "http://127.0.0.1:\(port)/login?token=\(token.value)"])
            try await page.waitUntil("the list, live", "document.getElementById('live')?.textContent === 'live'")
            _ = try await page.evaluate("window.notifbridgeMarker = 1")

            try await restart(with: token, page)
            try await page.waitUntil("the page to come back live", "document.getElementById('live')?.textContent === 'live'", timeout: .seconds(20))
            #expect(try await page.evaluate("window.notifbridgeMarker") as? Int == 1, "the same page, not a login")

            try await restart(with: DashboardToken(value: String(repeating: "0f", count: 32)), page)
            try await page.waitUntil("the login page", "document.querySelector('main.login') !== null", timeout: .seconds(20))
        }
    }
}

/// The daemon's terminal output is not under test here.
struct Quiet: Presenter {
    func present(_ event: PresenterEvent) {}
}
