import NotifBridgeControl
import NotifBridgeDisplay

extension ListedNotification {
    /// How `notifbridge respond list` shows this notification: every field through
    /// `terminalSafe`, the body's own lines indented under it.
    public var terminalLines: [String] {
        let safe = { (text: String) in terminalSafe(text) }
        let marks = (alerted ? "  (alerted)" : "") + (removed ? "  (removed)" : "")
        var lines = ["\(safe(source)) \(safe(id))  \(safe(app))\(title.map { " — \(safe($0))" } ?? "")\(marks)"]
        if let body { lines.append("    \(terminalSafe(body, lineBreak: "\n    "))") }
        if bodyOmitted == true { lines.append("    (body too long to list)") }
        for action in actions {
            lines.append("    action \(safe(action.id))\(action.title.map { " \"\(safe($0))\"" } ?? "") [\(safe(action.type))]")
        }
        return lines
    }
}
