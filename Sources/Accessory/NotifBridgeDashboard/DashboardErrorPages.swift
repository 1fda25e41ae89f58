import Foundation
import HTTPTypes
import Hummingbird

/// A page a person opens that cannot be shown (a mistyped address, a notification that is gone, a
/// link without its parameters) comes back as a page in the dashboard's look, saying what was
/// wrong and leading back to the list, instead of Hummingbird's JSON or an empty body. Only GET
/// and HEAD: the page's script posts to /respond and reads the JSON it answers.
struct ErrorPages: RouterMiddleware {
    typealias Context = BasicRequestContext

    struct Page {
        let pageTitle: String
        let status: String
        let message: String
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let path = request.uri.path.removingPercentEncoding ?? request.uri.path
            var response = Self.page(for: error, path: path)
            for field in error.headers { response.headers.append(field) }
            return response
        }
    }

    static func page(for error: HTTPError, path: String) -> Response {
        let message: String
        switch (error.status, error.body) {
        case (_, let body?): message = body
        // The path as typed, decoded; the template escapes it.
        case (.notFound, nil): message = "there is no page \(path) on this dashboard"
        case (let status, nil): message = status.reasonPhrase
        }
        let page = Page(pageTitle: error.status.reasonPhrase, status: "\(error.status.code) \(error.status.reasonPhrase)", message: message)
        return DashboardServer.html(DashboardTemplates.render(page, "error"), status: error.status)
    }
}
