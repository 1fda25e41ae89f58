import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NotifBridgeRelayCore
import Synchronization

/// Pushes an accessory's reply to the iPhone (docs/PROTOCOL.md §10.6).
public protocol APNsPushing: Sendable {
    func push(_ body: [UInt8], to target: PushTarget) async -> RelayFrame.PushStatus
}

/// APNs over HTTP/2 (async-http-client, ALPN) with token authentication: each request carries a
/// provider token signed with the team's auth key, renewed on APNs' schedule
/// (``APNsTokenSchedule``). Logs carry statuses and APNs' reasons, never the body or the token.
/// Its lines are at info: every push an accessory sends can make one, so the relay's notice
/// about a push that was not delivered is the one it rations per accessory.
public final class APNsClient: APNsPushing {
    public struct Configuration: Sendable {
        /// Apple's production endpoint, or `https://api.sandbox.push.apple.com`, or a stand-in.
        public var endpoint: String
        public var signingKey: APNsSigningKey
        /// Certificates to trust instead of the system's (a test stand-in's CA).
        public var trustRoots: [NIOSSLCertificate]?
        public var timeout: Duration

        public static let production = "https://api.push.apple.com"

        public init(endpoint: String = production, signingKey: APNsSigningKey, trustRoots: [NIOSSLCertificate]? = nil, timeout: Duration = .seconds(10)) {
            self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            self.signingKey = signingKey
            self.trustRoots = trustRoots
            self.timeout = timeout
        }
    }

    /// The most of APNs' answer read: `{"reason":"…"}`.
    static let maxResponseLength = 2048

    public let configuration: Configuration
    private let http: HTTPClient
    private let schedule = Mutex(APNsTokenSchedule())
    private let logger: Logger
    private let lastVersion = Mutex<HTTPVersion?>(nil)

    /// The HTTP version of the last answer (APNs speaks HTTP/2 only), for the tests.
    @_spi(Testing) public var lastHTTPVersion: HTTPVersion? { lastVersion.withLock { $0 } }

    public init(configuration: Configuration, logger: Logger) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.trustRoots { tls.trustRoots = .certificates(roots) }
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        http.httpVersion = .automatic
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        self.configuration = configuration
        self.logger = logger
    }

    public func shutdown() async throws {
        try await http.shutdown()
    }

    public func push(_ body: [UInt8], to target: PushTarget) async -> RelayFrame.PushStatus {
        let token: String
        do {
            token = try schedule.withLock { schedule throws(APNsError) in
                try schedule.token(now: Date()) { date throws(APNsError) in try APNsProviderToken.make(signingKey: configuration.signingKey, issuedAt: date) }
            }
        } catch {
            logger.error("cannot sign an APNs provider token", metadata: ["error": "\(error)"])
            return .notConfigured
        }
        var request = HTTPClientRequest(url: "\(configuration.endpoint)/3/device/\(target.token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        request.headers.add(name: "apns-push-type", value: "accessory")
        request.headers.add(name: "apns-topic", value: target.topic)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: HTTPResponseStatus
        let reason: String
        do {
            let response = try await http.execute(request, timeout: TimeAmount(configuration.timeout))
            status = response.status
            lastVersion.withLock { $0 = response.version }
            let answer = try await response.body.collect(upTo: Self.maxResponseLength)
            reason = (try? JSONDecoder().decode(Answer.self, from: Data(answer.readableBytesView)))?.reason ?? ""
        } catch {
            logger.info("APNs unreachable", metadata: ["error": "\(error)"])
            return .tryLater
        }
        let outcome = Self.status(for: status.code, reason: reason)
        if outcome != .delivered {
            logger.info("APNs did not take the push", metadata: ["status": "\(status.code)", "reason": "\(reason)"])
        }
        if reason == "ExpiredProviderToken" { schedule.withLock { _ = $0.expired(now: Date()) } }
        return outcome
    }

    /// What an APNs answer means for the accessory: retry later, or never.
    public static func status(for code: UInt, reason: String) -> RelayFrame.PushStatus {
        switch code {
        case 200: .delivered
        case 403 where reason == "ExpiredProviderToken": .tryLater
        case 429, 500...599: .tryLater
        default: .refused
        }
    }

    private struct Answer: Decodable {
        var reason: String
    }
}
