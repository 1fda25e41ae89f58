import Foundation
import NotifBridgeHostCore

/// The notification corpus in `Fixtures/corpus/`, compiled into the binary by SwiftPM's
/// `embedInCode` rule: the demo runs from any directory, and the JSON files stay the only copy.
/// The tests read the same files from disk and check that this list names every one of them.
public enum FixtureCorpus {
    public struct File: Sendable {
        /// The file name in `Fixtures/corpus/`.
        public let name: String
        public let bytes: [UInt8]

        public func operations() throws(Invalid) -> [HostOperation] {
            do {
                return try HostOperation.list(fromJSON: Data(bytes))
            } catch {
                throw Invalid(description: "Fixtures/corpus/\(name): \(error)")
            }
        }
    }

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// In the order the demo forwards them: conversations first, the long texts last.
    public static let files: [File] = [
        File(name: "messages-thread.json", bytes: PackageResources.messages_thread_json),
        File(name: "incoming-call.json", bytes: PackageResources.incoming_call_json),
        File(name: "calendar.json", bytes: PackageResources.calendar_json),
        File(name: "mail.json", bytes: PackageResources.mail_json),
        File(name: "two-factor.json", bytes: PackageResources.two_factor_json),
        File(name: "alerts.json", bytes: PackageResources.alerts_json),
        File(name: "right-to-left.json", bytes: PackageResources.right_to_left_json),
        File(name: "cjk.json", bytes: PackageResources.cjk_json),
        File(name: "emoji.json", bytes: PackageResources.emoji_json),
        File(name: "long-bodies.json", bytes: PackageResources.long_bodies_json),
    ]

    /// Every file's operations, in `files` order.
    public static func operations() throws(Invalid) -> [HostOperation] {
        var all: [HostOperation] = []
        for file in files { all += try file.operations() }
        return all
    }
}
