import Foundation
import NotifBridgeANCS
import Yams

/// A timeline the simulated iPhone plays as an ANCS server (`notifbridge phone ancs --file`):
/// notifications posted, modified and removed, pauses, disconnects (one of them in the middle
/// of a Data Source reply) and reconnects, and actions it waits to be asked to perform.
///
/// ```yaml
/// apps: {com.apple.MobileSMS: Messages}
/// steps:
///   - post: {uid: 1, app: com.apple.MobileSMS, title: Anna, message: "Lunch?", category: social,
///            flags: [important, positive-action, negative-action], positive: Reply, negative: Clear,
///            pre-existing: true}
///   - remove: 1
///   - wait: 1.5
///   - disconnect: {during-reply: true}
///   - reconnect
///   - expect-action: {uid: 2, action: negative}
/// ```
public struct ANCSScenario: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        /// Posts (or, for a known uid, modifies) a notification. Pre-existing ones are held back
        /// until the accessory subscribes, as an iPhone announces what it already has.
        case post(ANCSNotification, preExisting: Bool)
        case remove(uid: UInt32)
        case wait(Duration)
        /// Drops the connection; with `duringReply`, in the middle of the next Data Source reply.
        case disconnect(duringReply: Bool)
        /// Connects again; every notification still posted is announced as pre-existing.
        case reconnect
        /// Waits until the accessory asks for this action on this notification.
        case expectAction(uid: UInt32, ANCSActionID)
    }

    public var apps: [String: String]
    public var steps: [Step]

    /// Longest scenario file read, and most steps: a scenario is a test fixture, not a feed.
    public static let maxFileLength = 1 << 20
    public static let maxSteps = 10_000

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static func parse(_ yaml: String) throws(Invalid) -> ANCSScenario {
        guard yaml.utf8.count <= maxFileLength else { throw Invalid("the scenario is \(yaml.utf8.count) bytes; at most \(maxFileLength)") }
        let file: File
        do {
            file = try YAMLDecoder().decode(File.self, from: yaml)
        } catch {
            throw Invalid("not an ANCS scenario: \(error)")
        }
        guard file.steps.count <= maxSteps else { throw Invalid("\(file.steps.count) steps; at most \(maxSteps)") }
        var steps: [Step] = []
        for (index, raw) in file.steps.enumerated() {
            do {
                steps.append(try raw.step())
            } catch let error as Invalid {
                throw Invalid("step \(index + 1): \(error.description)")
            } catch {
                throw Invalid("step \(index + 1): \(error)")
            }
        }
        return ANCSScenario(apps: file.apps ?? [:], steps: steps)
    }

    private struct File: Decodable {
        var apps: [String: String]?
        var steps: [RawStep]
    }

    private struct RawStep: Decodable {
        var post: Post?
        var remove: UInt32?
        var wait: Double?
        var disconnect: Disconnect?
        var reconnect: Bool?
        var expectAction: ExpectAction?

        enum CodingKeys: String, CodingKey {
            case post, remove, wait, disconnect, reconnect
            case expectAction = "expect-action"
        }

        /// A bare word (`disconnect`, `reconnect`), checked in `step()` so the error names the step.
        var word: String?

        init(from decoder: any Decoder) throws {
            if let word = try? decoder.singleValueContainer().decode(String.self) {
                switch word {
                case "disconnect": disconnect = Disconnect(duringReply: false)
                case "reconnect": reconnect = true
                default: self.word = word
                }
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            post = try container.decodeIfPresent(Post.self, forKey: .post)
            remove = try container.decodeIfPresent(UInt32.self, forKey: .remove)
            wait = try container.decodeIfPresent(Double.self, forKey: .wait)
            disconnect = try container.decodeIfPresent(Disconnect.self, forKey: .disconnect)
            reconnect = try container.decodeIfPresent(Bool.self, forKey: .reconnect)
            expectAction = try container.decodeIfPresent(ExpectAction.self, forKey: .expectAction)
        }

        func step() throws -> Step {
            if let word { throw Invalid("\"\(word)\" is not disconnect or reconnect") }
            let set = [post != nil, remove != nil, wait != nil, disconnect != nil, reconnect != nil, expectAction != nil].filter { $0 }.count
            guard set == 1 else { throw Invalid("a step is exactly one of post, remove, wait, disconnect, reconnect, expect-action") }
            if let post { return try post.step() }
            if let remove { return .remove(uid: remove) }
            if let wait {
                guard wait >= 0, wait <= 3600 else { throw Invalid("wait is 0 to 3600 seconds; it was \(wait)") }
                return .wait(.milliseconds(Int(wait * 1000)))
            }
            if let disconnect { return .disconnect(duringReply: disconnect.duringReply ?? false) }
            if reconnect != nil { return .reconnect }
            guard let expectAction else { throw Invalid("empty step") }
            guard let action = ANCSActionID(name: expectAction.action) else { throw Invalid("action is positive or negative; it was \"\(expectAction.action)\"") }
            return .expectAction(uid: expectAction.uid, action)
        }
    }

    private struct Post: Decodable {
        var uid: UInt32
        var app: String
        var title: String?
        var subtitle: String?
        var message: String?
        var date: String?
        var category: String?
        var flags: [String]?
        var positive: String?
        var negative: String?
        var preExisting: Bool?

        enum CodingKeys: String, CodingKey {
            case uid, app, title, subtitle, message, date, category, flags, positive, negative
            case preExisting = "pre-existing"
        }

        func step() throws -> Step {
            guard !app.isEmpty else { throw Invalid("post needs an app identifier") }
            let category = try category.map { name in
                guard let found = ANCSCategory(name: name) else {
                    throw Invalid("category \"\(name)\" is not one of \(ANCSCategory.names.joined(separator: ", "))")
                }
                return found
            } ?? .other
            var eventFlags: ANCSEventFlags = []
            for name in flags ?? [] {
                guard let flag = ANCSEventFlags(name: name) else { throw Invalid("flag \"\(name)\" is not silent, important, positive-action or negative-action") }
                eventFlags.insert(flag)
            }
            if positive != nil { eventFlags.insert(.positiveAction) }
            if negative != nil { eventFlags.insert(.negativeAction) }
            let notification = ANCSNotification(
                uid: uid, flags: eventFlags, category: category, appIdentifier: app, appName: nil,
                title: title ?? "", subtitle: subtitle ?? "", message: message ?? "", date: date,
                positiveActionLabel: positive, negativeActionLabel: negative
            )
            return .post(notification, preExisting: preExisting ?? false)
        }
    }

    private struct Disconnect: Decodable {
        var duringReply: Bool?
        enum CodingKeys: String, CodingKey { case duringReply = "during-reply" }
    }

    private struct ExpectAction: Decodable {
        var uid: UInt32
        var action: String
    }
}

extension ANCSActionID {
    init?(name: String) {
        switch name {
        case "positive": self = .positive
        case "negative": self = .negative
        default: return nil
        }
    }
}

extension ANCSEventFlags {
    init?(name: String) {
        switch name {
        case "silent": self = .silent
        case "important": self = .important
        case "positive-action": self = .positiveAction
        case "negative-action": self = .negativeAction
        default: return nil
        }
    }
}

extension ANCSCategory {
    static let names = ["other", "incoming-call", "missed-call", "voicemail", "social", "schedule", "email", "news", "health-and-fitness", "business-and-finance", "location", "entertainment"]

    init?(name: String) {
        guard let index = Self.names.firstIndex(of: name), let category = ANCSCategory(rawValue: UInt8(index)) else { return nil }
        self = category
    }
}
