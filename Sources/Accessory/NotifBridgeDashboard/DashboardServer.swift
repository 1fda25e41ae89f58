import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeControl
import NotifBridgeStore
import NotifBridgeTCP
import NotifBridgeWebServing
import NotifBridgeWire
import ServiceLifecycle

/// The web dashboard (`notifbridge accessory --dashboard 127.0.0.1:7421`): the live list with
/// search and a filter by app, each notification's detail, its actions, the link state, the
/// effective policy and a chart of the last day. Every request carries the token (``DashboardToken``);
/// the pages load nothing from elsewhere.
///
/// ```
/// GET  /                        the list (?app=SOURCE&q=TEXT)
/// GET  /notification?source&id  one notification
/// GET  /file?source&id&part     an icon or attachment (source-icon, context-icon, attachment-N)
/// GET  /chart                   the per-hour chart, as a fragment of the list page
/// POST /respond                 {"op":"action|reply|dismiss|clear","source","id","action","text"}, as `notifbridge respond`
/// GET  /live                    WebSocket: {"kind":"notification|removedAll|state", …, "html"}
/// GET  /login?token=T           opens a session and sets its cookie; POST /login takes the token from a form
/// POST /logout                  ends the session
/// ```
public struct DashboardServer: Sendable {
    public struct Configuration: Sendable {
        /// Loopback unless told otherwise.
        public var host: String
        public var port: Int
        /// Eight live pages and their requests fit; a local program cannot open more.
        public var limits: ConnectionLimits

        public init(host: String = "127.0.0.1", port: Int = 7421, limits: ConnectionLimits = ConnectionLimits(maxConnections: 32)) {
            self.host = host
            self.port = port
            self.limits = limits
        }
    }

    let store: AccessoryStore
    let policyText: String
    let respond: @Sendable (ControlRequest) async -> ControlReply
    let hub: DashboardHub
    let guardian: DashboardGuard
    let configuration: Configuration
    let logger: Logger
    let now: @Sendable () -> Date

    /// The longest request body read: a reply of `ContentLimits.maxTextFieldLength` in JSON, with room.
    static let maxRequestBody = 16 * 1024

    public init(
        store: AccessoryStore, policy: some Encodable, respond: @escaping @Sendable (ControlRequest) async -> ControlReply,
        hub: DashboardHub, token: DashboardToken, tokenPath: String, configuration: Configuration = Configuration(),
        logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        policyText = (try? encoder.encode(policy)).map { String(decoding: $0, as: UTF8.self) } ?? "(cannot be shown)"
        self.respond = respond
        self.hub = hub
        guardian = DashboardGuard(token: token, tokenPath: tokenPath, loopbackOnly: TCPLink.isLoopback(configuration.host), sessions: DashboardSessions(token: token))
        self.configuration = configuration
        self.logger = logger
        self.now = now
    }

    /// The Hummingbird application; run it with `runService()` or inside a ServiceGroup.
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        router.add(middleware: ErrorPages())
        router.add(middleware: guardian)
        router.get("/static/dashboard.css") { _, _ in Self.asset(DashboardAssets.css, type: "text/css; charset=utf-8") }
        router.get("/static/dashboard.js") { _, _ in Self.asset(DashboardAssets.script, type: "text/javascript; charset=utf-8") }
        router.get("/login") { request, _ in try guardian.login(token: request.uri.queryParameters["token"].map(String.init)) }
        router.post("/login") { request, _ in
            var body = try await request.collectBody(upTo: 1024, what: "a login form")
            let form = String(decoding: body.readBytes(length: body.readableBytes) ?? [], as: UTF8.self)
            let token = form.split(separator: "&").first { $0.hasPrefix("token=") }.map { String($0.dropFirst(6)).removingPercentEncoding ?? "" }
            return try guardian.login(token: token)
        }
        router.post("/logout") { request, _ in try guardian.logout(request) }
        router.get("/") { request, _ in try listPage(request) }
        router.get("/notification") { request, _ in try detailPage(request) }
        router.get("/chart") { _, _ in try chart() }
        router.get("/file") { request, _ in try file(request) }
        router.post("/respond") { request, _ in try await respond(to: request) }
        router.get("/live") { _, _ -> Response in throw HTTPError(.badRequest, message: "/live is a WebSocket: send an upgrade request") }

        let liveRouter = Router(context: BasicWebSocketRequestContext.self)
        liveRouter.boundedWebSocket("/live") { request, _ in
            guardian.allowsLive(request) ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, outbound, context in
            try await serveLive(inbound: inbound, outbound: outbound) { guardian.authorized(context.request) }
        }

        return Application(
            router: router,
            server: .boundedHTTP1WebSocketUpgrade(webSocketRouter: liveRouter, limits: configuration.limits),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: configuration.limits.delegate(logger: logger)
            ),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The application as a service whose failure says what failed: a port in use stops the
    /// daemon with "cannot serve the dashboard on …", not a bare bind error.
    public func service(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some Service {
        DashboardService(application: application(onListening: onListening), address: "\(configuration.host):\(configuration.port)")
    }

    // MARK: Pages

    private struct ListPage {
        let pageTitle = "Notifications"
        let items: [NotificationView]
        let apps: [Listing.App]
        let app: String?
        let text: String?
        let filtered: Bool
        let truncated: Bool
        let maxListed = Listing.maxListed
        /// nil for none: a Mustache section shows for 0 too.
        let damaged: Int?
        let state: StateView
        let chart: ChartView
        let policy: String
    }

    private func listPage(_ request: Request) throws -> Response {
        let query: ListQuery
        do {
            query = try ListQuery(app: request.uri.queryParameters["app"].map(String.init), text: request.uri.queryParameters["q"].map(String.init))
        } catch {
            throw HTTPError(.badRequest, message: error.description)
        }
        let listing = try reading { try Listing.read(store, query: query, now: now()) }
        let page = ListPage(
            items: listing.items, apps: listing.apps, app: query.app, text: request.uri.queryParameters["q"].map(String.init),
            filtered: query.app != nil || query.text != nil, truncated: listing.truncated, damaged: listing.damaged > 0 ? listing.damaged : nil,
            state: StateView(hub.state), chart: ChartView(listing.hours), policy: policyText
        )
        return Self.html(DashboardTemplates.render(page, "list"))
    }

    /// The chart alone: the list page fetches it again after notifications arrive.
    private func chart() throws -> Response {
        let listing = try reading { try Listing.read(store, query: try ListQuery(), items: false, now: now()) }
        return Self.html(DashboardTemplates.render(ChartView(listing.hours), "chart"))
    }

    private struct DetailPage {
        let pageTitle: String
        let notification: NotificationView
    }

    private func detailPage(_ request: Request) throws -> Response {
        let record = try lookUp(request)
        let view = NotificationView(record)
        return Self.html(DashboardTemplates.render(DetailPage(pageTitle: view.title ?? view.app, notification: view), "detail"))
    }

    /// An icon or attachment. Images a browser shows are served as such; anything else only as a
    /// download, and every file under a policy that lets it run nothing.
    private func file(_ request: Request) throws -> Response {
        let notification = try lookUp(request).notification
        let part = request.uri.queryParameters["part"].map(String.init) ?? ""
        let file: Notifbridge_V1_File
        switch part {
        case "source-icon": file = notification.sourceIcon
        case "context-icon": file = notification.contextIcon
        case let name where name.hasPrefix("attachment-"):
            guard let index = Int(name.dropFirst("attachment-".count)), notification.attachments.indices.contains(index) else {
                throw HTTPError(.notFound, message: "this notification has \(notification.attachments.count) attachments; there is no \(name)")
            }
            file = notification.attachments[index]
        default:
            throw HTTPError(.badRequest, message: "part is source-icon, context-icon or attachment-N")
        }
        guard !file.data.isEmpty else { throw HTTPError(.notFound, message: "this notification has no \(part)") }
        var headers: HTTPFields = [.contentSecurityPolicy: "default-src 'none'; sandbox"]
        if let type = NotificationView.imageTypes[file.uniformType] {
            headers[.contentType] = type
        } else {
            headers[.contentType] = "application/octet-stream"
            headers[.contentDisposition] = "attachment"
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.data)))
    }

    private func lookUp(_ request: Request) throws -> StoredNotification {
        guard let source = request.uri.queryParameters["source"], let id = request.uri.queryParameters["id"], !source.isEmpty, !id.isEmpty else {
            throw HTTPError(.badRequest, message: "source and id are required")
        }
        let record = try reading { try store.notification(source: String(source), id: String(id)) }
        guard let record else { throw HTTPError(.notFound, message: "no such notification on this accessory") }
        return record
    }

    /// A store read; its failure is logged here and the page only says the store failed.
    private func reading<T>(_ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch {
            logger.error("dashboard: cannot read the store: \(error)")
            throw HTTPError(.internalServerError, message: "cannot read the store")
        }
    }

    // MARK: Acting

    /// The same requests as `notifbridge respond`, from the page's buttons.
    private func respond(to request: Request) async throws -> Response {
        try guardian.checkSameOrigin(request)
        guard request.headers[.contentType]?.hasPrefix("application/json") == true else {
            throw HTTPError(.unsupportedMediaType, message: "send the request as application/json")
        }
        var body = try await request.collectBody(upTo: Self.maxRequestBody, what: "a request")
        let line = String(decoding: body.readBytes(length: body.readableBytes) ?? [], as: UTF8.self)
        let reply: ControlReply
        do {
            let control = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
            reply = control.op == .list ? .failure("list is not an action; the page lists") : await respond(control)
        } catch let error as DecodingError {
            // Said by the place in the request, not with the decoder's dump of its internals.
            let operations = ControlRequest.Operation.allCases.map(\.rawValue)
            reply = .failure("not a request this page sends: \(JSONFileErrors.describe(error, words: ["op": operations]))")
        } catch {
            reply = .failure("not a request this page sends: \(JSONFileErrors.syntax(error))")
        }
        return try Self.json(ControlReply(ok: reply.ok, message: reply.message), status: reply.ok ? .ok : .unprocessableContent)
    }

    // MARK: Live updates

    private struct LiveMessage: Encodable {
        let kind: String
        var change: String?
        var key: String?
        var html: String?
    }

    /// Sends each update of the hub to the page until either side ends; a page that fell behind
    /// is closed with 4000, which its script answers by reloading.
    /// Sends the hub's updates to one page. `stillAllowed` is asked before each one: a page
    /// whose session ended (signed out, expired) is closed (4001) rather than sent what follows;
    /// the page then finds its way to the login.
    private func serveLive(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, stillAllowed: @escaping @Sendable () -> Bool
    ) async throws {
        guard let updates = hub.subscribe() else {
            try await outbound.close(.unknown(1013), reason: "too many open pages")
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // The page sends nothing; reading notices when it goes away.
                for try await _ in inbound.messages(maxSize: 1024) {}
            }
            group.addTask {
                for await update in updates {
                    guard stillAllowed() else {
                        try await outbound.close(.unknown(4001), reason: "the session has ended; sign in again")
                        return
                    }
                    let message = try encoder.encode(Self.message(for: update))
                    try await outbound.write(.text(String(decoding: message, as: UTF8.self)))
                }
                try Task.checkCancellation()
                try await outbound.close(.unknown(4000), reason: "fell behind; reload")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private static func message(for update: DashboardHub.Update) -> LiveMessage {
        switch update {
        case .notification(let record, let change):
            let view = NotificationView(record)
            return LiveMessage(kind: "notification", change: change.rawValue, key: view.key, html: DashboardTemplates.render(view, "item"))
        case .removedAll:
            return LiveMessage(kind: "removedAll")
        case .state(let state):
            return LiveMessage(kind: "state", html: DashboardTemplates.render(StateView(state), "state"))
        }
    }

    // MARK: Responses

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    private static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let data = try JSONEncoder().encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

struct DashboardService<App: ApplicationProtocol>: Service {
    let application: App
    let address: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func run() async throws {
        do {
            try await application.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw Failure(description: "cannot serve the dashboard on \(address): the port is already in use")
        } catch {
            throw Failure(description: "cannot serve the dashboard on \(address): \(socketErrorText(error))")
        }
    }
}
