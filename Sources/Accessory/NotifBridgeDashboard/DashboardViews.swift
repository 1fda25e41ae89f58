import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeWire

/// What the pages show, as plain values for the templates. Every string that came from a peer is
/// left as it came: the templates escape it (`{{...}}`), and the page's script only inserts
/// markup the server rendered.
struct NotificationView: Sendable {
    let key: String
    let source: String
    let id: String
    let app: String
    let title: String?
    let subtitle: String?
    let body: String?
    /// Lowercased title, subtitle, body and app: what the page's live filter searches.
    let searchText: String
    let received: String
    let receivedISO: String
    let detailURL: String
    let sourceIconURL: String?
    let contextIconURL: String?
    let removed: Bool
    let alerted: Bool
    let decision: DecisionView?
    let buttons: [ActionView]
    let replies: [ActionView]
    let canDismiss: Bool
    let attachments: [AttachmentView]
    let hasAttachments: Bool
    let iOSAlerting: String?

    /// The list item's identity for live updates: `source/id`, with `%` and `/` escaped in the
    /// source, so that a peer's source holding a `/` cannot name another notification's item.
    static func key(source: String, id: String) -> String {
        source.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F") + "/" + id
    }

    init(_ record: StoredNotification) {
        let n = record.notification
        source = record.sourceIdentifier
        id = record.notificationIdentifier
        key = Self.key(source: source, id: id)
        app = n.sourceName.isEmpty ? source : n.sourceName
        title = n.hasTitle && !n.title.isEmpty ? n.title : nil
        subtitle = n.hasSubtitle && !n.subtitle.isEmpty ? n.subtitle : nil
        body = n.hasBody ? n.body.plainText : nil
        searchText = [app, title, subtitle, body].compactMap { $0 }.joined(separator: "\n").lowercased()
        received = record.receivedAt.formatted(date: .abbreviated, time: .standard)
        receivedISO = record.receivedAt.ISO8601Format()
        let query = DashboardURL.notificationQuery(source: source, id: id)
        detailURL = "/notification?" + query
        sourceIconURL = Self.isImage(n.sourceIcon) ? "/file?\(query)&part=source-icon" : nil
        contextIconURL = Self.isImage(n.contextIcon) ? "/file?\(query)&part=context-icon" : nil
        removed = record.removed
        alerted = record.alerted
        decision = record.alertDecision.map(DecisionView.init)
        buttons = n.actions.filter { $0.type == .background || $0.type == .unspecified }.map(ActionView.init)
        replies = n.actions.filter { $0.type == .textInput }.map(ActionView.init)
        canDismiss = n.actions.contains { $0.type == .dismiss }
        attachments = n.attachments.enumerated().map { AttachmentView(index: $0.offset, file: $0.element, query: query) }
        hasAttachments = !attachments.isEmpty
        iOSAlerting = record.alerting.map(Self.describe)
    }

    /// Image types a browser shows; anything else is offered as a download only.
    static let imageTypes: [String: String] = [
        "public.png": "image/png", "public.jpeg": "image/jpeg", "com.compuserve.gif": "image/gif", "org.webmproject.webp": "image/webp",
    ]

    static func isImage(_ file: Notifbridge_V1_File) -> Bool {
        !file.data.isEmpty && imageTypes[file.uniformType] != nil
    }

    private static func describe(_ context: WireAlertingContext) -> String {
        var parts = [context.shouldAlert ? "iOS would alert" : "iOS would not alert"]
        if context.suppressedByFocus { parts.append("held by a Focus") }
        if !context.notificationCanAlert { parts.append("alerts are off for this app") }
        switch context.kind {
        case .incomingCall: parts.append("incoming call")
        case .activeCall: parts.append("active call")
        case .timer: parts.append("timer")
        default: break
        }
        if context.hasSound { parts.append(context.sound.ignoreSilentMode ? "sound, even in silent mode" : "sound") }
        return parts.joined(separator: ", ")
    }
}

struct ActionView: Sendable {
    let id: String
    let title: String
    let placeholder: String

    init(_ action: Notifbridge_V1_Action) {
        id = action.identifier
        title = action.hasTitle && !action.title.isEmpty ? action.title : action.identifier
        placeholder = action.placeholder.isEmpty ? "Reply" : action.placeholder
    }
}

struct AttachmentView: Sendable {
    let url: String
    let type: String
    let size: String
    let isImage: Bool

    init(index: Int, file: Notifbridge_V1_File, query: String) {
        url = "/file?\(query)&part=attachment-\(index)"
        type = file.uniformType.isEmpty ? "unknown type" : file.uniformType
        size = ByteCountFormatter.string(fromByteCount: Int64(file.data.count), countStyle: .file)
        isImage = NotificationView.isImage(file)
    }
}

/// Why a notification alerted or not, as the planner decided when it arrived.
struct DecisionView: Sendable {
    let alerts: Bool
    let summary: String
    let reason: String

    init(_ decision: AlertDecision) {
        alerts = decision.alerts
        var parts = [decision.alerts ? "alerted" : (decision.coalesced ? "held back by the burst limit" : "listed only")]
        if decision.urgent { parts.append("urgent") }
        if decision.persistent { parts.append("stays until acted on") }
        if decision.sound != .none { parts.append("sound: \(decision.sound.rawValue)") }
        if decision.haptic != .none { parts.append("haptic: \(decision.haptic.rawValue)") }
        summary = parts.joined(separator: ", ")
        reason = decision.reason
    }
}

/// The link panel.
struct StateView: Sendable {
    let serving: [String]
    let peers: [String]
    let connected: Bool
    let exchange: String?
    let problem: String?

    init(_ state: DashboardHub.LinkState) {
        serving = state.serving
        peers = state.peers
        connected = !state.peers.isEmpty
        exchange = state.exchange.map { exchange in
            var text = "\(exchange.suite), exchange \(exchange.id)"
            if let at = exchange.at { text += exchange.resumed ? ", resumed at " : ", made at "; text += at.formatted(date: .omitted, time: .standard) }
            else { text += ", held from before this start" }
            return text
        }
        problem = state.problem.map { "\($0.at.formatted(date: .omitted, time: .standard)): \($0.text)" }
    }
}

enum DashboardURL {
    /// `source=…&id=…`, each percent-encoded for a query value.
    static func notificationQuery(source: String, id: String) -> String {
        "source=\(encode(source))&id=\(encode(id))"
    }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: queryValue) ?? ""
    }

    private static let queryValue: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#;/?")
        return set
    }()
}
