import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import NotifBridgeLogGate
import NotifBridgeRelayCore
import NotifBridgeWebServing
import ServiceLifecycle
import UnixSignals

/// The relay (`notifbridge relay serve`, docs/PROTOCOL.md §11): the companion app's transport
/// extension posts an accessory's messages over HTTP; the accessory reads them from its inbox, a
/// WebSocket, and acknowledges what it has stored. It sees ciphertext only and logs numbers,
/// never message bytes.
///
/// ```
/// POST /v1/accessories/{id}/messages   Authorization: Bearer <post token>    body: one §10.3 message
///      201 {"seq":N} · 400 shorter than a §10.3 message · 401 unknown accessory or wrong token · 413 too long
///      · 429 queue full, or over the post rate (with Retry-After)
/// GET  /v1/accessories/{id}/inbox      Authorization: Bearer <inbox token>   WebSocket upgrade
/// GET  /v1/health                      200 ok
/// (another method on one of these paths: 405 with Allow)
/// ```
public struct RelayServer: Sendable {
    public struct Configuration: Sendable {
        /// Loopback unless told otherwise: a relay on the internet sits behind a TLS terminator.
        public var host: String
        /// 0: any free port (`onListening` says which).
        public var port: Int
        /// How often expired messages are deleted.
        public var sweepInterval: Duration
        /// Connections held at once (each open inbox is one), and how long one may sit idle.
        public var limits: ConnectionLimits
        /// Lines about one accessory's refusals and closed inboxes per `logInterval`; the rest
        /// are counted and summarised, so a token holder cannot flood the log.
        public var logBurst: Int
        public var logInterval: Duration
        /// Pushes through APNs per accessory; one past it is answered "try later" (§11.4).
        public var pushRate: RateLimit
        /// Posts per accessory; one past it is refused with 429 and a `Retry-After` (§11.4).
        public var postRate: RateLimit
        /// How often the open inboxes' tokens are checked against the store (``TokenWatch``): a token
        /// replaced by `relay register` (a lost or leaked one) ends the inbox opened with it
        /// within this time, in this relay instance or another on the same database.
        public var tokenCheckInterval: Duration

        public init(
            host: String = "127.0.0.1", port: Int = 8470, sweepInterval: Duration = .seconds(60),
            limits: ConnectionLimits = ConnectionLimits(maxConnections: 1024), logBurst: Int = 5, logInterval: Duration = .seconds(10),
            pushRate: RateLimit = .pushes, postRate: RateLimit = .posts, tokenCheckInterval: Duration = .seconds(5)
        ) {
            self.host = host
            self.port = port
            self.sweepInterval = sweepInterval
            self.limits = limits
            self.logBurst = logBurst
            self.logInterval = logInterval
            self.pushRate = pushRate
            self.postRate = postRate
            self.tokenCheckInterval = tokenCheckInterval
        }
    }

    public let store: any RelayStorage
    /// APNs, for the accessory's replies; nil: this relay does not push.
    public let pusher: (any APNsPushing)?
    public let configuration: Configuration
    let hub = InboxHub()
    let committer: PostCommitter
    let logger: Logger
    let gate: LogGate
    let pushes: RateGate
    let posts: RateGate
    let now: @Sendable () -> Date

    public init(store: any RelayStorage, configuration: Configuration = Configuration(), pusher: (any APNsPushing)? = nil, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.pusher = pusher
        self.configuration = configuration
        self.logger = logger
        gate = LogGate(LogThrottle(burst: configuration.logBurst, interval: configuration.logInterval))
        self.now = now
        pushes = RateGate(rate: configuration.pushRate)
        posts = RateGate(rate: configuration.postRate)
        committer = PostCommitter(store: store, now: now)
    }

    /// A known path asked with another method gets 405 and the method it takes (RFC 9110
    /// §15.5.6), not 404, which would say that the path does not exist.
    private static func refuseOtherMethods(_ router: Router<BasicRequestContext>, _ routes: [(path: RouterPath, method: HTTPRequest.Method)]) {
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .options]
        for route in routes {
            for method in methods where method != route.method {
                router.on(route.path, method: method) { _, _ -> Response in
                    throw HTTPError(.methodNotAllowed, headers: [.allow: route.method.rawValue], message: "this path takes \(route.method.rawValue) only")
                }
            }
        }
    }

    /// The Hummingbird application; run it with `runService()` or inside a ServiceGroup.
    /// - Parameter onListening: called with the bound port once the server listens.
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        router.get("/v1/health") { _, _ in "ok" }
        router.post("/v1/accessories/{id}/messages") { request, context in try await post(request, context) }
        router.put("/v1/accessories/{id}/push-token") { request, context in try await registerPushTarget(request, context) }
        // Reached when an inbox request was not upgraded: say why rather than "not found".
        router.get("/v1/accessories/{id}/inbox") { request, context -> Response in
            guard try await authorized(request, context, as: .inbox) != nil else { throw Self.unauthorized }
            throw HTTPError(.badRequest, message: "the inbox is a WebSocket: send an upgrade request")
        }
        Self.refuseOtherMethods(router, [
            ("/v1/health", .get), ("/v1/accessories/{id}/messages", .post), ("/v1/accessories/{id}/push-token", .put), ("/v1/accessories/{id}/inbox", .get),
        ])

        let inboxRouter = Router(context: BasicWebSocketRequestContext.self)
        inboxRouter.boundedWebSocket("/v1/accessories/{id}/inbox") { request, context in
            try await authorized(request, context, as: .inbox) == nil ? .dontUpgrade : .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let id = context.requestContext.parameters.get("id"), let token = context.request.bearerToken.map(String.init) else { return }
            try await serveInbox(id, token: token, inbound: inbound, outbound: outbound)
        }

        return Application(
            router: router,
            // Outgoing messages longer than a WebSocket frame (16 KiB) go out in fragments.
            server: .boundedHTTP1WebSocketUpgrade(webSocketRouter: inboxRouter, limits: configuration.limits),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: configuration.limits.delegate(logger: logger)
            ),
            services: [
                Sweeper(store: store, interval: configuration.sweepInterval, logger: logger, now: now),
                ElsewherePosts(store: store, hub: hub),
                TokenWatch(store: store, hub: hub, interval: configuration.tokenCheckInterval, logger: logger),
                LogSummaries(gate: gate, logger: logger),
            ],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The most the relay buffers of one WebSocket message from an accessory: a push frame
    /// (§11.2) with the largest APNs body.
    static let maxAccessoryMessage = RelayFrame.headerLength + RelayFrame.maxPushBodyLength

    /// Serves until SIGINT, SIGTERM or SIGHUP, then finishes gracefully (ServiceLifecycle): open
    /// inboxes are closed, and what was accepted is already on disk. SIGHUP too, as the
    /// accessory does: a closed terminal ended the relay at once, its WAL not checkpointed.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await application(onListening: onListening).runService(gracefulShutdownSignals: [.sigterm, .sigint, .sighup])
    }

    /// With the scheme to use, as a 401 must say (RFC 9110 §11.6.1, RFC 6750 §3).
    static let unauthorized = HTTPError(.unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="notifbridge-relay""#], message: "unknown accessory or wrong token")

    /// The accessory's id if the request's bearer token is its token for `role`; unknown
    /// accessories and wrong tokens look the same.
    private func authorized(_ request: Request, _ context: some RequestContext, as role: RelayRole) async throws -> String? {
        guard let id = context.parameters.get("id"), let token = request.bearerToken.map(String.init) else { return nil }
        return try await store.authorizes(token, accessory: id, as: role) ? id : nil
    }

    private func post(_ request: Request, _ context: some RequestContext) async throws -> Response {
        guard let id = try await authorized(request, context, as: .post) else { throw Self.unauthorized }
        try admitPost(id, "post")
        let limit = store.limits.maxMessageLength
        // Refused before anything is read when the length is declared.
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw HTTPError(.contentTooLarge, message: "a message of \(declared) bytes is over the limit of \(limit)")
        }
        var body = try await request.collectBody(upTo: limit, what: "a message")
        let message = body.readBytes(length: body.readableBytes) ?? []
        let seq: UInt64
        do {
            seq = try await committer.post(message, to: id)
        } catch let error as RelayError {
            gate.pass(id) {
                logger.notice("post refused", metadata: ["accessory": "\(id)", "code": "\(error.code.rawValue)", "bytes": "\(message.count)"])
            }
            throw HTTPError(error.httpStatus, message: error.detail)
        }
        logger.debug("posted", metadata: ["accessory": "\(id)", "seq": "\(seq)", "bytes": "\(message.count)"])
        hub.posted(for: id)
        return Response(
            status: .created,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"seq":\#(seq)}"#))
        )
    }

    /// Counts one request of a post token against its accessory's post rate, before its body is
    /// read, so that a refused one costs the relay nothing more.
    private func admitPost(_ id: String, _ what: String) throws {
        guard let seconds = posts.admit(id) else { return }
        gate.pass(id) {
            logger.notice("\(what) refused: over the accessory's post rate", metadata: ["accessory": "\(id)", "retry after": "\(seconds)"])
        }
        throw HTTPError(
            .tooManyRequests, headers: [.retryAfter: "\(seconds)"],
            message: "over the accessory's post rate (\(configuration.postRate.burst) at once, then one each \(configuration.postRate.interval)); try again in \(seconds) s"
        )
    }

    private struct Registration: Decodable {
        var pushToken: String
        var bundleID: String
    }

    /// The largest push-token registration read.
    public static let maxPushTargetBody = 1024

    /// `PUT /v1/accessories/{id}/push-token`: where the accessory's replies are pushed.
    private func registerPushTarget(_ request: Request, _ context: some RequestContext) async throws -> Response {
        guard let id = try await authorized(request, context, as: .post) else { throw Self.unauthorized }
        // Each one is an fsynced write: a post token registering without end was not bounded.
        try admitPost(id, "push-token registration")
        var body = try await request.collectBody(upTo: Self.maxPushTargetBody, what: "a push-token registration")
        let target: PushTarget
        do {
            let registration = try JSONDecoder().decode(Registration.self, from: Data(body.readBytes(length: body.readableBytes) ?? []))
            target = try PushTarget(token: registration.pushToken, bundleID: registration.bundleID)
        } catch let error as RelayError {
            throw HTTPError(.badRequest, message: error.detail)
        } catch {
            throw HTTPError(.badRequest, message: #"the body is {"pushToken":"<hex>","bundleID":"<companion app bundle ID>"}"#)
        }
        try await store.setPushTarget(target, accessory: id)
        logger.info("push token registered", metadata: ["accessory": "\(id)"])
        return Response(status: .noContent)
    }

    private func serveInbox(_ id: String, token: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let connection = InboxConnection(accessoryID: id, token: token, store: store, pusher: pusher, pushes: pushes, logger: logger, gate: gate, now: now)
        hub.attach(connection)
        logger.info("inbox opened", metadata: ["accessory": "\(id)", "open inboxes": "\(hub.count)"])
        do {
            try await store.announceInbox(of: id)
        } catch {
            // The inbox works; only an older one on another instance may stay open.
            gate.pass(id, .connections) { logger.notice("could not tell other relay instances of the inbox", metadata: ["accessory": "\(id)", "error": "\(error)"]) }
        }
        defer {
            hub.detach(connection)
            connection.finished()
        }
        do {
            // On the server's graceful shutdown the relay closes the inbox itself (normal
            // closure), so that the wait for the accessory's answer is bounded like any other.
            try await withGracefulShutdownHandler {
                try await pump(connection, inbound: inbound, outbound: outbound)
            } onGracefulShutdown: {
                connection.end(.stopping)
            }
        } catch {
            // A write that failed: the connection is gone (the peer, or the stalled-reader close).
            gate.pass(id, .connections) {
                logger.notice("inbox ended", metadata: ["accessory": "\(id)", "error": "\(error)"])
            }
        }
        logger.info("inbox closed", metadata: ["accessory": "\(id)"])
    }

    /// Writes what the session sends and feeds it what the accessory sends, until either ends.
    /// After the relay's close the reader reads on for the accessory's answering close, which
    /// ends it, for at most the close timeout; then the pump ends. It read on without a limit, so
    /// an accessory that never answered held its connection for ever.
    private func pump(_ connection: InboxConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let id = connection.accessoryID
        try await withThrowingTaskGroup(of: PumpPart.self) { group in
            group.addTask {
                await connection.run()
                return .session
            }
            group.addTask {
                for await output in connection.output {
                    switch output {
                    case .frame(let bytes):
                        // In frames of at most 16 KiB, as §11.5 says (`write(.binary:)` sent one
                        // frame of any length, which a client with the usual frame limit refuses).
                        try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes))
                        connection.wrote()
                    case .close(let ending):
                        gate.pass(id, .connections) {
                            logger.notice("inbox closed by the relay", metadata: ["accessory": "\(id)", "reason": "\(ending)"])
                        }
                        try await outbound.close(ending.closeCode, reason: ending.closeReason)
                        return .closedByRelay
                    }
                }
                return .closedByRelay
            }
            group.addTask {
                defer { connection.finished() }
                var messages = AccessoryMessages(maxLength: Self.maxAccessoryMessage)
                var refused = false
                do {
                    for try await frame in inbound {
                        // After a refusal only the accessory's answering close is waited for.
                        guard !refused else { continue }
                        switch messages.take(frame.opcode, fin: frame.fin, frame.data) {
                        case .more: continue
                        case .message(let bytes): await connection.receive(bytes)
                        case .refused(let error):
                            refused = true
                            await connection.refuse(error)
                        }
                    }
                } catch is CancellationError {
                } catch {
                    gate.pass(id, .connections) {
                        logger.notice("inbox read failed", metadata: ["accessory": "\(id)", "error": "\(error)"])
                    }
                }
                return .closedByAccessory
            }
            connection.opened()
            // The accessory's close, or the end of its connection, ends the reader; once the
            // relay's close is out, the accessory has the close timeout to answer it.
            let closeTimeout = configuration.limits.closeTimeout
            waiting: while let part = try await group.next() {
                switch part {
                case .session: continue
                case .closedByRelay:
                    group.addTask {
                        try? await Task.sleep(for: closeTimeout)
                        return .closeUnanswered
                    }
                case .closedByAccessory, .closeUnanswered: break waiting
                }
            }
            connection.finished()
            group.cancelAll()
        }
    }

    private enum PumpPart { case session, closedByRelay, closedByAccessory, closeUnanswered }
}

extension RelayError {
    var httpStatus: HTTPResponse.Status {
        switch code {
        case .malformed, .protocolViolation: .badRequest
        case .tooLarge: .contentTooLarge
        case .queueFull: .tooManyRequests
        case .unauthorized: .unauthorized
        }
    }
}

extension InboxConnection.Ending {
    var closeCode: WebSocketErrorCode {
        switch self {
        case .refused: .policyViolation
        case .goingAway: .goingAway
        case .stopping: .normalClosure
        }
    }

    /// A close frame's reason is at most 123 bytes (RFC 6455 §5.5): the detail, cut at a
    /// character, so that the accessory can say why ("the inbox token was replaced …").
    var closeReason: String {
        let text = switch self {
        case .refused(let error): error.detail
        case .goingAway(let why): why
        case .stopping: "the relay is stopping"
        }
        var cut = ""
        for character in text {
            guard cut.utf8.count + character.utf8.count <= 123 else { break }
            cut.append(character)
        }
        return cut
    }
}

/// Deletes expired messages now and then, so an accessory that never returns does not hold its
/// queue's room for ever.
struct Sweeper: Service {
    let store: any RelayStorage
    let interval: Duration
    let logger: Logger
    let now: @Sendable () -> Date

    func run() async throws {
        try await repeatUntilShutdown(every: interval, startingNow: true) { [store, logger, now] in
            do {
                let swept = try await store.sweep(now: now())
                if swept > 0 { logger.info("expired messages deleted", metadata: ["count": "\(swept)"]) }
            } catch {
                logger.error("sweeping expired messages failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Writes a line for each accessory whose lines the gate held back, once its window closes.
struct LogSummaries: Service {
    let gate: LogGate
    let logger: Logger

    func run() async throws {
        try await repeatUntilShutdown(every: .milliseconds(500)) { [gate, logger] in
            for line in gate.summaryLines() { logger.notice("\(line)") }
        }
    }
}

/// Wakes the inboxes open here when another relay instance sharing the store took a post for
/// their accessory, and ends one whose accessory opened an inbox there (PostgreSQL's
/// LISTEN/NOTIFY; nothing happens with SQLite).
struct ElsewherePosts: Service {
    let store: any RelayStorage
    let hub: InboxHub

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in store.elsewhere() {
                switch event {
                case .posted(let accessoryID): hub.posted(for: accessoryID)
                case .inboxOpened(let accessoryID): hub.openedElsewhere(accessoryID)
                }
            }
        }
        // A service that returns ends the whole group: wait for the relay's own shutdown.
        try? await gracefulShutdown()
    }
}
