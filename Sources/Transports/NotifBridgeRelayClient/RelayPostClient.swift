import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotifBridgeHostCore
import NotifBridgeTCP

/// The transport extension's upload for the internet transport (docs/PROTOCOL.md §11.5): one
/// sealed message per `POST /v1/accessories/{id}/messages`, authorised with the accessory's post
/// token. The relay answers only once the message is on its disk.
public struct RelayPostClient: Sendable {
    public struct Configuration: Sendable {
        /// The relay's base URL: `http(s)://host:port`; `ws://` and `wss://` (the accessory's form
        /// of the same address) are taken as `http://` and `https://`.
        public var relay: String
        public var accessoryID: String
        public var token: String
        public var timeout: Duration

        public init(relay: String, accessoryID: String, token: String, timeout: Duration = .seconds(10)) {
            self.relay = relay
            self.accessoryID = accessoryID
            self.token = token
            self.timeout = timeout
        }

        var postURL: String {
            var base = relay.hasSuffix("/") ? String(relay.dropLast()) : relay
            if base.hasPrefix("ws://") { base = "http://" + base.dropFirst("ws://".count) }
            if base.hasPrefix("wss://") { base = "https://" + base.dropFirst("wss://".count) }
            return base + "/v1/accessories/\(accessoryID)/messages"
        }
    }

    /// Why a post did not land, sorted the way the system treats a transport's completion.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// No relay answered (refused, unreachable, timed out): try another transport.
        case unreachable(String)
        /// The relay answered but could not take it now (its queue for the accessory is full, or
        /// it failed): the same transport may take it later.
        case busy(status: Int, detail: String)
        /// The relay will never take this post as it is (a wrong token, a malformed or too large
        /// message): retrying cannot help.
        case refused(status: Int, detail: String)

        public var description: String {
            switch self {
            case .unreachable(let reason): "the relay is unreachable: \(reason)"
            case .busy(let status, let detail): "the relay cannot take it now (HTTP \(status)): \(detail)"
            case .refused(let status, let detail): "the relay refused it (HTTP \(status)): \(detail)"
            }
        }
    }

    /// The largest answer read from the relay: `{"seq":N}` or a short error.
    static let maxResponseLength = 4096

    public let configuration: Configuration
    private let client: HTTPClient

    public init(configuration: Configuration, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.client = client
    }

    /// Posts one message; returns the relay's sequence number for it.
    public func post(_ message: some DataProtocol) async throws(Failure) -> UInt64 {
        var request = HTTPClientRequest(url: configuration.postURL)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .bytes(ByteBuffer(bytes: message))
        let status: HTTPResponseStatus
        let body: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: TimeAmount(configuration.timeout))
            status = response.status
            body = try await response.body.collect(upTo: Self.maxResponseLength)
        } catch {
            throw .unreachable(socketErrorText(error))
        }
        let text = String(buffer: body)
        switch status.code {
        case 201:
            guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(text.utf8)) else {
                throw .refused(status: 201, detail: "the relay's answer is not {\"seq\":N}")
            }
            return answer.seq
        case 429, 500...599:
            throw .busy(status: Int(status.code), detail: text)
        default:
            throw .refused(status: Int(status.code), detail: text)
        }
    }

    private struct Answer: Decodable {
        var seq: UInt64
    }
}

extension RelayPostClient {
    /// A post as the transport extension completes `messageReceived` for the system: a relay
    /// that cannot take it now is `.transportFailed` (the system retries), one that is unreachable
    /// or refuses it is `.transportUnavailable` (the system tries the next transport, or holds it).
    /// `onFailure` hears why, for a log.
    public func send(_ message: Data, onFailure: @Sendable (Failure) -> Void = { _ in }) async throws(AccessoryMessageError) {
        do throws(Failure) {
            _ = try await post(message)
        } catch {
            onFailure(error)
            switch error {
            case .busy: throw .transportFailed
            case .unreachable, .refused: throw .transportUnavailable
            }
        }
    }
}
