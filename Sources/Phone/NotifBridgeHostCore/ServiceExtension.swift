import Foundation
import NotifBridgeWire

/// A notification service extension (`UNNotificationServiceExtension`) as iOS runs it: only for
/// an alert with `mutable-content: 1`; it may hand back a modified copy of the content within
/// about 30 seconds, and if it fails, answers nonsense or runs out of time, iOS shows the
/// original. This is the pure part: when it runs, reading its answer, applying it, and choosing
/// between the rewrite and the original. NotifBridgeHost runs the command.
///
/// Only title, subtitle, body and attachments change. iOS's mutable content also has setters
/// for the thread, category and interruption level; the simulator keeps those (and the
/// identifier, which no extension can change) from the payload, so the actions and alerting
/// context computed from it stand. A rewrite naming any other field is refused by name.
public enum ServiceExtension {
    /// iOS gives `didReceive(_:withContentHandler:)` about 30 s, then calls
    /// `serviceExtensionTimeWillExpire()`.
    public static let defaultDeadline = Duration.seconds(30)
    /// Bytes of output read from the extension: a rewrite larger than one wire message could
    /// never be forwarded, and this still fits an attachment of the accessory's maximum size.
    public static let maxOutputLength = WireLimits.defaultMaxMessageLength
    /// The fields a rewrite may set, in the order changes are reported.
    public static let mutableFields = ["title", "subtitle", "body", "attachments"]

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// iOS runs the extension only for `mutable-content: 1` (the payload already has an alert,
    /// or `APNsPayload.map` would have refused it).
    public static func runs(for mapped: APNsPayload.Mapped) -> Bool { mapped.mutableContent }

    /// How the extension's process ended, as the runtime saw it.
    public enum Completion: Sendable, Hashable {
        case exited(status: Int32, output: [UInt8], outputTruncated: Bool)
        case signalled(Int32)
        case timedOut(after: Duration)
        /// It could not be started, or its end could not be observed.
        case failed(String)
    }

    public enum Fallback: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        case timedOut(Duration)
        case failed(String)
        case invalidOutput(String)

        public var description: String {
            switch self {
            case .exited(let status): "the service extension exited with status \(status)"
            case .signalled(let signal): "the service extension was killed by signal \(signal)"
            case .timedOut(let deadline): "the service extension did not answer within \(deadline) and was killed"
            case .failed(let reason): "the service extension could not be run: \(reason)"
            case .invalidOutput(let reason): "the service extension's output was not used: \(reason)"
            }
        }
    }

    public enum Outcome: Sendable, Hashable, CustomStringConvertible {
        /// No `mutable-content`: iOS does not run the extension.
        case notRun
        /// The extension's content is shown; `changed` names the fields that differ.
        case rewritten(changed: [String])
        /// The original content is shown.
        case original(Fallback)

        public var description: String {
            switch self {
            case .notRun: "no mutable-content, so iOS does not run the service extension"
            case .rewritten(let changed) where changed.isEmpty: "the service extension returned the content unchanged"
            case .rewritten(let changed): "the service extension changed \(changed.joined(separator: ", ")); forwarding its content"
            case .original(let fallback): "\(fallback); forwarding the original content, as iOS does"
            }
        }
    }

    /// What iOS shows once the extension has ended: its rewrite, or exactly the original.
    public static func resolve(_ mapped: APNsPayload.Mapped, completion: Completion) -> (APNsPayload.Mapped, Outcome) {
        let output: [UInt8]
        switch completion {
        case .exited(0, let bytes, false): output = bytes
        case .exited(0, _, true): return (mapped, .original(.invalidOutput("more than \(maxOutputLength) bytes")))
        case .exited(let status, _, _): return (mapped, .original(.exited(status)))
        case .signalled(let signal): return (mapped, .original(.signalled(signal)))
        case .timedOut(let deadline): return (mapped, .original(.timedOut(deadline)))
        case .failed(let reason): return (mapped, .original(.failed(reason)))
        }
        do {
            let (rewritten, changed) = try apply(Rewrite.parse(output), to: mapped)
            return (rewritten, .rewritten(changed: changed))
        } catch {
            return (mapped, .original(.invalidOutput(error.description)))
        }
    }

    /// The extension's content applied to a copy of `mapped`, and the fields that changed.
    public static func apply(_ rewrite: Rewrite, to mapped: APNsPayload.Mapped) throws(Invalid) -> (APNsPayload.Mapped, changed: [String]) {
        var result = mapped
        var notification = mapped.notification
        /// UNMutableNotificationContent's text is never nil; "" is how an extension removes it.
        func text(_ value: String?, _ original: String?) -> String? {
            guard let value else { return original }
            return value.isEmpty ? nil : value
        }
        notification.title = text(rewrite.title, notification.title)
        notification.subtitle = text(rewrite.subtitle, notification.subtitle)
        if let body = rewrite.body {
            notification.body = body.isEmpty ? nil : body
            notification.bodyRuns = nil
        }
        if let attachments = rewrite.attachments {
            notification.attachments = attachments.isEmpty ? nil : attachments
        }
        guard notification.title != nil || notification.subtitle != nil || notification.body != nil else {
            throw Invalid("it leaves no title, subtitle or body to show")
        }
        let original = mapped.notification
        let changed = [
            ("title", notification.title != original.title),
            ("subtitle", notification.subtitle != original.subtitle),
            ("body", notification.body != original.body || notification.bodyRuns != original.bodyRuns),
            ("attachments", notification.attachments != original.attachments),
        ].filter(\.1).map(\.0)
        result.notification = notification
        return (result, changed)
    }
}
