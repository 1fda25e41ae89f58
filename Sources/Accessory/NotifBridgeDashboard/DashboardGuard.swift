import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Hummingbird
import NotifBridgeWebServing

/// Lets a request through only with the dashboard's token (`Authorization: Bearer`), or with
/// the cookie of a session the token opened (``DashboardSessions``), which is never the token
/// itself. On loopback it also refuses a Host header that is not a loopback name, so a web page
/// that rebinds its own name to 127.0.0.1 cannot reach the dashboard even before the token
/// stops it.
struct DashboardGuard: RouterMiddleware {
    typealias Context = BasicRequestContext

    let token: DashboardToken
    let tokenPath: String
    let loopbackOnly: Bool
    let sessions: DashboardSessions

    static let cookieName = "notifbridge_dashboard"
    /// Reachable without the token: the login itself and the stylesheet it uses.
    static let open: Set<String> = ["/login", "/static/dashboard.css"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard hostAllowed(request) else {
            throw HTTPError(.misdirectedRequest, message: "this dashboard answers to loopback names only")
        }
        if Self.open.contains(request.uri.path) || authorized(request) {
            return try await next(request, context)
        }
        if request.method == .get, request.uri.path == "/" || request.uri.path == "/notification" {
            return loginPage(failed: false, status: .unauthorized)
        }
        throw HTTPError(.unauthorized, message: "the dashboard's token is required (the file \(tokenPath))")
    }

    func authorized(_ request: Request) -> Bool {
        if let cookie = request.cookies[Self.cookieName], sessions.isOpen(Substring(cookie.value)) { return true }
        if let bearer = request.bearerToken { return token.matches(bearer) }
        return false
    }

    /// The WebSocket upgrade: the token, a loopback Host, and a page of this same origin.
    func allowsLive(_ request: Request) -> Bool {
        hostAllowed(request) && authorized(request) && sameOrigin(request)
    }

    func checkSameOrigin(_ request: Request) throws {
        guard sameOrigin(request) else { throw HTTPError(.forbidden, message: "a request from another site's page is refused") }
    }

    /// Each Origin that names a page (http or https) must be this dashboard's own. No Origin,
    /// or a ws:// one (what non-browser WebSocket clients send; no page has such an origin), is
    /// not a browser page.
    private func sameOrigin(_ request: Request) -> Bool {
        let pages = request.headers[values: .origin].filter { !$0.hasPrefix("ws://") && !$0.hasPrefix("wss://") }
        guard !pages.isEmpty else { return true }
        guard let host = request.head.authority else { return false }
        return pages.allSatisfy { $0 == "http://\(host)" || $0 == "https://\(host)" }
    }

    private func hostAllowed(_ request: Request) -> Bool {
        guard loopbackOnly else { return true }
        guard let host = request.head.authority else { return true }
        return Self.loopbackAuthority(host)
    }

    /// `NAME` or `NAME:PORT` (`[IPv6]` or `[IPv6]:PORT`) with a loopback name and a port of
    /// digits alone: `127.0.0.1:7421@attacker.example` is not a loopback Host, whatever its start.
    static func loopbackAuthority(_ authority: String) -> Bool {
        let name: Substring, rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            name = authority[authority.index(after: authority.startIndex)..<close]
            rest = authority[authority.index(after: close)...]
        } else {
            name = authority.prefix { $0 != ":" }
            rest = authority[name.endIndex...]
        }
        guard rest.isEmpty || (rest.first == ":" && rest.count > 1 && rest.dropFirst().allSatisfy(\.isASCII) && rest.dropFirst().allSatisfy(\.isNumber)) else {
            return false
        }
        return isLoopbackName(String(name))
    }

    /// `localhost`, an IPv4 address in 127.0.0.0/8 or `::1`, parsed as addresses: a name that
    /// merely starts with "127." is somebody's domain.
    static func isLoopbackName(_ name: String) -> Bool {
        if name.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        return inet_pton(AF_INET6, name, &v6) == 1 && withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    private struct LoginPage {
        let pageTitle = "Sign in"
        let tokenPath: String
        let failed: Bool
    }

    func loginPage(failed: Bool, status: HTTPResponse.Status) -> Response {
        DashboardServer.html(DashboardTemplates.render(LoginPage(tokenPath: tokenPath, failed: failed), "login"), status: status)
    }

    /// With the right token, opens a session, sets its cookie (HttpOnly, SameSite=Strict, for the
    /// session's lifetime) and goes to the list; with a wrong one, shows the login again.
    func login(token candidate: String?) throws -> Response {
        guard let candidate, token.matches(Substring(candidate)) else {
            return loginPage(failed: candidate != nil, status: .unauthorized)
        }
        var response = Response(status: .seeOther, headers: [.location: "/"])
        let maxAge = Int(DashboardSessions.lifetime.components.seconds)
        response.setCookie(Cookie(name: Self.cookieName, value: sessions.open(), maxAge: maxAge, path: "/", httpOnly: true, sameSite: .strict))
        return response
    }

    /// Ends the browser's session, clears its cookie and shows the login. Only a page of this
    /// dashboard may ask: a page on another port of this machine is the same site, so
    /// SameSite=Strict still sends it the cookie.
    func logout(_ request: Request) throws -> Response {
        try checkSameOrigin(request)
        if let cookie = request.cookies[Self.cookieName] { sessions.close(Substring(cookie.value)) }
        var response = Response(status: .seeOther, headers: [.location: "/login"])
        response.setCookie(Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/", httpOnly: true, sameSite: .strict))
        return response
    }
}

/// Headers on every response: nothing from elsewhere, no framing, no referrer to other sites
/// (a login URL carries the token), nothing cached.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = BasicRequestContext

    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = try error.response(from: request, context: context)
        }
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.policy }
        response.headers[.xContentTypeOptions] = "nosniff"
        // Nothing to other sites (a login URL carries the token); this dashboard's own
        // requests keep their Origin, which sign-out checks (under no-referrer a form sends "null").
        response.headers[Self.referrerPolicy] = "same-origin"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
