import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeWire

/// Something the accessory shows: on its screen (the terminal) or to a program (JSON lines).
/// (Named for the presenter; "display" is the text layout of `NotifBridgeDisplay`.)
public enum PresenterEvent: Sendable {
    case listening(host: String, port: Int, suite: String, keyID: String)
    /// Advertising the GATT service on a Bluetooth adapter, under this name.
    case advertising(adapter: String, name: String, suite: String, keyID: String)
    case connected(peer: String)
    case disconnected(peer: String)
    case keyExchange(suite: String, exchangeID: UInt64, resumed: Bool)
    case notification(StoredNotification, change: Change)
    case removedAll(count: Int)
    case ignored(source: String, id: String, reason: String)
    case resync(reason: String)
    case refused(detail: String)
    /// Notifications held back during a burst, announced as one alert.
    case burstSummary(count: Int)

    public enum Change: String, Sendable {
        case added, updated, removed
    }
}

public protocol Presenter: Sendable {
    func present(_ event: PresenterEvent)
    /// What one commit changed, in order. Presenters that write lines write them at once.
    func present(_ events: [PresenterEvent])
}

extension Presenter {
    public func present(_ events: [PresenterEvent]) {
        for event in events { present(event) }
    }
}

/// Readable lines, as a small screen would show them; with a display profile, title and body
/// are cut and wrapped exactly as an accessory screen of that size would show them. Every text
/// that came from a peer goes through `terminalSafe` (NotifBridgeDisplay) field by field.
public struct TerminalPresenter: Presenter {
    private let writer = LineWriter()
    private let profile: DisplayProfile?

    public init(profile: DisplayProfile? = nil) {
        self.profile = profile
    }

    public func present(_ event: PresenterEvent) {
        writer.write(Self.line(for: event, profile: profile))
    }

    public func present(_ events: [PresenterEvent]) {
        writer.write(events.map { Self.line(for: $0, profile: profile) })
    }

    /// What the terminal shows for an event (lines joined by newlines).
    static func line(for event: PresenterEvent, profile: DisplayProfile? = nil) -> String {
        switch event {
        case .listening(let host, let port, let suite, let keyID):
            "listening on \(hostAndPort(safe(host), port)) (\(safe(suite)), key \(keyID))"
        case .advertising(let adapter, let name, let suite, let keyID):
            "advertising \"\(safe(name))\" on \(safe(adapter)) (\(safe(suite)), key \(keyID))"
        case .connected(let peer):
            "host connected from \(safe(peer))"
        case .disconnected(let peer):
            "host \(safe(peer)) disconnected"
        case .keyExchange(let suite, let exchangeID, let resumed):
            "\(resumed ? "resumed" : "completed") \(safe(suite)) key exchange \(exchangeHex(exchangeID))"
        case .notification(let stored, let change):
            render(stored, change: change, profile: profile)
        case .removedAll(let count):
            "✕ removed all (\(count) notification\(count == 1 ? "" : "s"))"
        case .ignored(let source, let id, let reason):
            "· ignored \(safe(source))/\(safe(id)): \(safe(reason))"
        case .resync(let reason):
            "⚠ resync: \(safe(reason)); offering a fresh key"
        case .refused(let detail):
            "⚠ refused: \(safe(detail))"
        case .burstSummary(let count):
            "🔔 \(count) more notification\(count == 1 ? "" : "s") arrived in a burst (listed, not alerted one by one)"
        }
    }

    /// iOS's own dismiss action has no title; show what a person expects to read.
    static func actionLabel(_ action: Notifbridge_V1_Action) -> String {
        safe(action.hasTitle ? action.title : (action.type == .dismiss ? "Dismiss" : action.identifier))
    }

    /// One field of peer text, on one line.
    static func safe(_ text: String) -> String {
        terminalSafe(text)
    }

    static func render(_ stored: StoredNotification, change: PresenterEvent.Change, profile: DisplayProfile? = nil) -> String {
        let n = stored.notification
        let marker: String
        switch change {
        case .added: marker = stored.alerted ? "🔔" : "●"
        case .updated: marker = "↻"
        case .removed: return "✕ removed \(safe(n.sourceName.isEmpty ? stored.sourceIdentifier : n.sourceName)) \(safe(stored.notificationIdentifier))"
        }
        var header = "\(marker) \(safe(n.sourceName))"
        if n.hasTitle { header += " — \(safe(n.title))" }
        var tags: [String] = []
        if n.attributes & UInt32(Notifbridge_V1_Attribute.critical.rawValue) != 0 { tags.append("critical") }
        if n.attributes & UInt32(Notifbridge_V1_Attribute.timeSensitive.rawValue) != 0 { tags.append("time-sensitive") }
        if let alerting = stored.alerting, alerting.kind == .incomingCall { tags.append("incoming call") }
        if change == .added, let decision = stored.alertDecision {
            if decision.alerts {
                if decision.sound != .none { tags.append(decision.sound == .evenInSilentMode ? "sound, even in silent mode" : "sound") }
                if decision.haptic != .none { tags.append(decision.haptic.rawValue) }
                if decision.persistent { tags.append("until acted on") }
            } else {
                tags.append("listed: \(safe(decision.reason))")
            }
        }
        if change == .updated { tags.append("updated") }
        if !tags.isEmpty { header += "  [\(tags.joined(separator: ", "))]" }
        var lines = [header]
        if let profile {
            let title = [n.hasTitle ? n.title : nil, n.hasSubtitle ? n.subtitle : nil].compactMap { $0 }.joined(separator: " · ")
            let screen = NotifBridgeDisplay.render(title: title.isEmpty ? n.sourceName : title, body: n.hasBody ? n.body.plainText : nil, profile: profile)
            let border = String(repeating: "─", count: profile.columns)
            lines.append("    ┌\(border)┐")
            for line in screen.map(safe) {
                lines.append("    │\(line)\(String(repeating: " ", count: max(0, profile.columns - displayWidth(of: line))))│")
            }
            lines.append("    └\(border)┘")
        } else {
            if n.hasSubtitle { lines.append("    \(safe(n.subtitle))") }
            if n.hasBody { lines.append("    \(terminalSafe(n.body.plainText, lineBreak: "\n    "))") }
        }
        if !n.actions.isEmpty { lines.append("    actions: \(n.actions.map(Self.actionLabel).joined(separator: " · "))") }
        return lines.joined(separator: "\n")
    }
}

/// One JSON object per line, for programs (a buzzer script, a dashboard, tests). Text is exact;
/// the controls a terminal would act on are escaped in the JSON (`jsonEscapingTerminalControls`).
public struct JSONPresenter: Presenter {
    private let writer = LineWriter()
    public init() {}

    public func present(_ event: PresenterEvent) {
        guard let line = Self.line(for: event) else { return }
        writer.write(line)
    }

    public func present(_ events: [PresenterEvent]) {
        writer.write(events.compactMap(Self.line(for:)))
    }

    static func line(for event: PresenterEvent) -> String? {
        var object: [String: Any] = [:]
        switch event {
        case .listening(let host, let port, let suite, let keyID):
            object = ["event": "listening", "host": host, "port": port, "suite": suite, "keyID": keyID]
        case .advertising(let adapter, let name, let suite, let keyID):
            object = ["event": "advertising", "adapter": adapter, "name": name, "suite": suite, "keyID": keyID]
        case .connected(let peer): object = ["event": "connected", "peer": peer]
        case .disconnected(let peer): object = ["event": "disconnected", "peer": peer]
        case .keyExchange(let suite, let exchangeID, let resumed):
            object = ["event": "keyExchange", "suite": suite, "exchangeID": exchangeHex(exchangeID), "resumed": resumed]
        case .notification(let stored, let change):
            object = Self.object(stored)
            object["event"] = "notification"
            object["change"] = change.rawValue
        case .removedAll(let count): object = ["event": "removedAll", "count": count]
        case .ignored(let source, let id, let reason): object = ["event": "ignored", "source": source, "id": id, "reason": reason]
        case .resync(let reason): object = ["event": "resync", "reason": reason]
        case .refused(let detail): object = ["event": "refused", "detail": detail]
        case .burstSummary(let count): object = ["event": "burstSummary", "count": count]
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return nil }
        return jsonEscapingTerminalControls(String(decoding: data, as: UTF8.self))
    }

    static func object(_ stored: StoredNotification) -> [String: Any] {
        let n = stored.notification
        var object: [String: Any] = [
            "source": stored.sourceIdentifier,
            "id": stored.notificationIdentifier,
            "sourceName": n.sourceName,
            "alerted": stored.alerted,
            "removed": stored.removed,
            "revision": stored.revision.description,
            "attributes": n.attributes,
            "deliveryDate": ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(n.deliveryDateMs) / 1000)),
        ]
        if n.hasTitle { object["title"] = n.title }
        if n.hasSubtitle { object["subtitle"] = n.subtitle }
        if n.hasBody { object["body"] = n.body.plainText }
        if n.hasThreadIdentifier { object["thread"] = n.threadIdentifier }
        if !n.actions.isEmpty { object["actions"] = n.actions.map(\.identifier) }
        if n.category != .unspecified { object["category"] = String(describing: n.category) }
        if let alerting = stored.alerting {
            object["kind"] = String(describing: alerting.kind)
            object["shouldAlert"] = alerting.shouldAlert
        }
        if let decision = stored.alertDecision { object["decision"] = Self.object(decision) }
        return object
    }

    static func object(_ decision: AlertDecision) -> [String: Any] {
        [
            "presentation": decision.presentation.rawValue, "sound": decision.sound.rawValue,
            "haptic": decision.haptic.rawValue, "persistent": decision.persistent, "reason": decision.reason,
        ]
    }
}
