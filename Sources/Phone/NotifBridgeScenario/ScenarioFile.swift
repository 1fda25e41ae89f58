import Foundation
import NotifBridgeHostCore
import Yams

/// Reads scenario YAML strictly: an unknown key, a wrong type or an out-of-range value is an
/// error naming its line, so a typo never turns into a scenario that silently tests less.
public enum ScenarioFile {
    /// Longer files are refused before they are parsed.
    public static let maxFileLength = 1024 * 1024
    public static let maxSteps = 10_000
    /// Longest `wait` step, in seconds.
    public static let maxWait = 600.0
    /// Largest synthetic attachment; the accessory refuses anything over its own limits anyway.
    public static let maxAttachmentBytes = 256 * 1024
    /// Calls in all steps together, `reorder` lists included: a YAML alias repeats a whole list,
    /// so a 2 KB file could otherwise describe millions of calls.
    public static let maxCalls = 10_000
    /// Synthetic attachment bytes of all calls together.
    public static let maxTotalAttachmentBytes = 16 * 1024 * 1024

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ node: Node?, _ message: String) {
            description = node?.mark.map { "line \($0.line): \(message)" } ?? message
        }
    }

    public static func parse(_ yaml: String) throws(Invalid) -> Scenario {
        guard yaml.utf8.count <= maxFileLength else {
            throw Invalid(nil, "scenario is \(yaml.utf8.count) bytes; at most \(maxFileLength) are read")
        }
        if let complex = KeyScan.firstComplexKey(in: yaml) {
            throw Invalid(nil, "line \(complex.line): \(complex.what) is not allowed; scenario keys are plain words")
        }
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: yaml) else { throw Invalid(nil, "scenario is empty") }
            root = node
        } catch let error as Invalid {
            throw error
        } catch {
            throw Invalid(nil, "not YAML: \(error)")
        }
        let top = try mapping(root, "scenario", allowed: ["name", "description", "source", "app", "steps", "expect"])
        let source = try text(top, "source") ?? Scenario.defaultSource
        let app = try text(top, "app") ?? Scenario.defaultApp
        let defaults = Defaults(source: source, app: app)
        guard let stepsNode = top["steps"], let steps = stepsNode.sequence else { throw Invalid(root, "steps: a list of steps is required") }
        guard steps.count <= maxSteps else { throw Invalid(stepsNode, "\(steps.count) steps; at most \(maxSteps)") }
        let parsed = try steps.map { (node: Node) throws(Invalid) in try step(node, defaults) }
        try checkTotals(parsed, stepsNode)
        return Scenario(
            name: try text(top, "name") ?? "unnamed scenario",
            summary: try text(top, "description"),
            source: source,
            app: app,
            steps: parsed,
            expect: try top["expect"].map { (node: Node) throws(Invalid) in try expectations(node, defaults) } ?? Expectations()
        )
    }

    /// Bounds the work the whole timeline asks for, which aliases can multiply past any
    /// per-step limit.
    private static func checkTotals(_ steps: [Step], _ node: Node) throws(Invalid) {
        let calls = steps.flatMap { step -> [OperationSpec] in
            switch step {
            case .operation(let spec): [spec]
            case .disconnect(let spec): spec.map { [$0] } ?? []
            case .reorder(let specs): specs
            case .focus, .reconnect, .restartAccessory, .settle, .wait: []
            }
        }
        guard calls.count <= maxCalls else { throw Invalid(node, "\(calls.count) calls; at most \(maxCalls), reorder lists included") }
        let attachmentBytes = calls.reduce(0) { total, call in
            if case .add(let spec) = call { return total + (spec.attachmentBytes ?? 0) }
            return total
        }
        guard attachmentBytes <= maxTotalAttachmentBytes else {
            throw Invalid(node, "attachment-bytes add up to \(attachmentBytes); at most \(maxTotalAttachmentBytes) in one scenario")
        }
    }

    struct Defaults {
        var source: String
        var app: String
    }

    // MARK: Steps

    private static func step(_ node: Node, _ defaults: Defaults) throws(Invalid) -> Step {
        if let word = node.scalar?.string {
            switch word {
            case "remove-all": return .operation(.removeAll)
            case "disconnect": return .disconnect(during: nil)
            case "reconnect": return .reconnect
            case "restart-accessory": return .restartAccessory
            case "settle": return .settle
            default: throw Invalid(node, "unknown step \"\(word)\"")
            }
        }
        let (key, value) = try single(node)
        switch key {
        case "focus":
            if let on = value.bool { return .focus(on) }
            throw Invalid(value, "focus: is on or off")
        case "disconnect":
            let fields = try mapping(value, "disconnect", allowed: ["during"])
            return .disconnect(during: try fields["during"].map { (node: Node) throws(Invalid) in try operation(node, defaults) })
        case "reorder":
            guard let list = value.sequence, list.count >= 2 else { throw Invalid(value, "reorder: a list of at least two calls") }
            return .reorder(try list.map { (node: Node) throws(Invalid) in try operation(node, defaults) })
        case "wait":
            guard let seconds = value.float, seconds >= 0, seconds <= maxWait else {
                throw Invalid(value, "wait: seconds between 0 and \(Int(maxWait))")
            }
            return .wait(seconds: seconds)
        default:
            return .operation(try operation(node, defaults))
        }
    }

    private static func operation(_ node: Node, _ defaults: Defaults) throws(Invalid) -> OperationSpec {
        if node.scalar?.string == "remove-all" { return .removeAll }
        let (key, value) = try single(node)
        switch key {
        case "add": return .add(try notification(value, defaults))
        case "update": return .update(try notification(value, defaults))
        case "remove": return .remove(try ref(value, defaults))
        default: throw Invalid(node, "unknown step \"\(key)\"; expected add, update, remove, remove-all, focus, disconnect, reconnect, restart-accessory, reorder, settle or wait")
        }
    }

    private static func notification(_ node: Node, _ defaults: Defaults) throws(Invalid) -> NotificationSpec {
        let fields = try mapping(node, "notification", allowed: ["id", "source", "app", "title", "subtitle", "body", "thread", "level", "kind", "attachment-bytes"])
        let level: NotificationSpec.Level = try fields["level"].map { (node: Node) throws(Invalid) in
            let word = try string(node, "level")
            guard let level = NotificationSpec.Level(rawValue: word) else {
                throw Invalid(node, "level \"\(word)\" is not \(NotificationSpec.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return level
        } ?? .active
        let kind: HostAlerting.Kind = try fields["kind"].map { (node: Node) throws(Invalid) in
            switch try string(node, "kind") {
            case "notification": return .notification
            case "incoming-call": return .incomingCall
            case "timer": return .timer
            case "active-call": return .activeCall
            case let other: throw Invalid(node, "kind \"\(other)\" is not notification, incoming-call, timer or active-call")
            }
        } ?? .notification
        let attachment: Int? = try fields["attachment-bytes"].map { (node: Node) throws(Invalid) in
            guard let bytes = node.int, bytes > 0, bytes <= maxAttachmentBytes else {
                throw Invalid(node, "attachment-bytes: between 1 and \(maxAttachmentBytes)")
            }
            return bytes
        }
        return NotificationSpec(
            ref: try ref(node, defaults),
            app: try text(fields, "app") ?? defaults.app,
            title: try text(fields, "title"),
            subtitle: try text(fields, "subtitle"),
            body: try text(fields, "body"),
            thread: try text(fields, "thread"),
            level: level,
            kind: kind,
            attachmentBytes: attachment
        )
    }

    /// `msg-1` (the scenario's source) or `{id: msg-1, source: com.example}`.
    private static func ref(_ node: Node, _ defaults: Defaults) throws(Invalid) -> NotificationRef {
        if let id = node.scalar?.string {
            guard !id.isEmpty else { throw Invalid(node, "an empty notification id") }
            return NotificationRef(source: defaults.source, id: id)
        }
        guard let fields = node.mapping else { throw Invalid(node, "a notification id, or a mapping with id and source") }
        guard let idNode = fields["id"] else { throw Invalid(node, "id is required") }
        let id = try string(idNode, "id")
        guard !id.isEmpty else { throw Invalid(idNode, "an empty notification id") }
        return NotificationRef(source: try text(fields, "source") ?? defaults.source, id: id)
    }

    // MARK: Expectations

    private static func expectations(_ node: Node, _ defaults: Defaults) throws(Invalid) -> Expectations {
        let fields = try mapping(node, "expect", allowed: ["present", "absent", "alerted", "not-alerted", "count"])
        var expect = Expectations()
        for item in try list(fields["present"], "present") {
            let detail = item.mapping
            if detail != nil {
                _ = try mapping(item, "present entry", allowed: ["id", "source", "title", "body"])
            }
            expect.present.append(.init(
                ref: try ref(item, defaults),
                title: try detail.flatMap { (fields: Node.Mapping) throws(Invalid) in try text(fields, "title") },
                body: try detail.flatMap { (fields: Node.Mapping) throws(Invalid) in try text(fields, "body") }
            ))
        }
        expect.absent = try list(fields["absent"], "absent").map { (node: Node) throws(Invalid) in try ref(node, defaults) }
        expect.alerted = try list(fields["alerted"], "alerted").map { (node: Node) throws(Invalid) in try ref(node, defaults) }
        expect.notAlerted = try list(fields["not-alerted"], "not-alerted").map { (node: Node) throws(Invalid) in try ref(node, defaults) }
        if let count = fields["count"] {
            guard let value = count.int, value >= 0 else { throw Invalid(count, "count: a number of notifications") }
            expect.count = value
        }
        return expect
    }

    // MARK: Node helpers

    private static func single(_ node: Node) throws(Invalid) -> (String, Node) {
        guard let fields = node.mapping, fields.count == 1, let (key, value) = fields.first, let name = key.string else {
            throw Invalid(node, "a step is one key (add, update, remove, …) with its value")
        }
        return (name, value)
    }

    private static func mapping(_ node: Node, _ what: String, allowed: Set<String>) throws(Invalid) -> Node.Mapping {
        guard let fields = node.mapping else { throw Invalid(node, "\(what): a mapping is expected") }
        for key in fields.keys {
            guard let name = key.string, allowed.contains(name) else {
                throw Invalid(key, "unknown key \"\(key.string ?? "?")\" in \(what); known: \(allowed.sorted().joined(separator: ", "))")
            }
        }
        return fields
    }

    private static func list(_ node: Node?, _ what: String) throws(Invalid) -> [Node] {
        guard let node else { return [] }
        guard let items = node.sequence else { throw Invalid(node, "\(what): a list is expected") }
        return Array(items)
    }

    private static func text(_ fields: Node.Mapping, _ key: String) throws(Invalid) -> String? {
        guard let node = fields[key] else { return nil }
        return try string(node, key)
    }

    private static func string(_ node: Node, _ what: String) throws(Invalid) -> String {
        guard let scalar = node.scalar else { throw Invalid(node, "\(what): text is expected") }
        return scalar.string
    }
}
