import Hummingbird
import HummingbirdWebSocket
import NIOCore

extension Request {
    /// The token of an `Authorization: Bearer <token>` header. The scheme's name is matched
    /// without regard to case, as HTTP says (RFC 9110 §11.1): `bearer` is as good as `Bearer`.
    public var bearerToken: Substring? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop { $0 == " " }
        return token.isEmpty ? nil : token
    }

    /// Whether the head announces a body (a length above 0, or a transfer coding).
    var announcesBody: Bool {
        if headers[.transferEncoding] != nil { return true }
        return headers[.contentLength].map { $0 != "0" } ?? false
    }

    /// The whole body, refused past `limit` with a message saying so (Hummingbird's own refusal
    /// is a 413 with an empty body, which a client can only guess at).
    public func collectBody(upTo limit: Int, what: String) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw HTTPError(.contentTooLarge, message: "\(what) is over the limit of \(limit) bytes")
        }
    }
}

extension Router where Context: WebSocketRequestContext {
    /// A WebSocket route, as `ws(_:shouldUpgrade:onUpgrade:)`, that never upgrades a request
    /// whose head announces a body. A WebSocket upgrade has none, and NIO holds one it accepted
    /// until its body has ended, with no time limit; refused, it is cut off like any request
    /// whose body does not come (``RequestDeadlineHandler``).
    @discardableResult public func boundedWebSocket(
        _ path: RouterPath,
        shouldUpgrade: @Sendable @escaping (Request, Context) async throws -> RouterShouldUpgrade,
        onUpgrade handler: @escaping WebSocketDataHandler<WebSocketRouterContext<Context>>
    ) -> Self {
        ws(path, shouldUpgrade: { request, context in
            request.announcesBody ? .dontUpgrade : try await shouldUpgrade(request, context)
        }, onUpgrade: handler)
    }
}
