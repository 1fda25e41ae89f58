import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeDisplay
import NotifBridgeFiles
import NotifBridgeStore

/// The accessory's settings file (JSON), read once at start. Every key is optional; unknown keys
/// are refused by name, so a typo never silently turns a setting off.
public struct PolicyFile: Codable, Sendable, Hashable {
    public var alerts: AlertSettings
    public var burst: BurstLimiter.Limit
    public var retention: Retention
    /// Display profile "LINESxCOLUMNS" for the terminal presenter, e.g. "4x32".
    public var display: String?
    public var hook: HookSettings?
    /// Also post each alert as a desktop notification (org.freedesktop.Notifications over
    /// D-Bus), with its actions as buttons.
    public var desktopNotifications: Bool

    public struct HookSettings: Codable, Sendable, Hashable {
        public enum Trigger: String, Codable, Sendable { case alerts, all }
        /// argv of the command; it gets the decision and notification as JSON on stdin.
        public var command: [String]
        public var timeoutSeconds: Double
        /// Run for alerts only (default) or for every new notification's decision.
        public var on: Trigger

        public init(command: [String], timeoutSeconds: Double = 5, on: Trigger = .alerts) {
            self.command = command
            self.timeoutSeconds = timeoutSeconds
            self.on = on
        }

        public init(from decoder: any Swift.Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            command = try container.decode([String].self, forKey: .command)
            guard !command.isEmpty, !command[0].isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .command, in: container, debugDescription: "needs at least the program to run")
            }
            timeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? 5
            guard timeoutSeconds > 0, timeoutSeconds <= 300 else {
                throw DecodingError.dataCorruptedError(forKey: .timeoutSeconds, in: container, debugDescription: "must be above 0 and at most 300")
            }
            on = try container.decodeIfPresent(Trigger.self, forKey: .on) ?? .alerts
        }
    }

    public init(alerts: AlertSettings = .default, burst: BurstLimiter.Limit = .init(), retention: Retention = .default, display: String? = nil, hook: HookSettings? = nil, desktopNotifications: Bool = false) {
        self.alerts = alerts
        self.burst = burst
        self.retention = retention
        self.display = display
        self.hook = hook
        self.desktopNotifications = desktopNotifications
    }

    public static let `default` = PolicyFile()

    private enum Keys: String, CodingKey, CaseIterable { case burst, retention, display, hook, desktopNotifications }

    /// Each notification is checked against every keyword rule and app name, so their number
    /// bounds the work per notification (22,000 rules made storing a hundred times slower).
    public static let maxKeywordRules = 256
    public static let maxAppsPerList = 1024
    /// Retention's age limit, in days: an hour at the least, since a smaller one deletes what was
    /// just stored (1e-300 emptied the store at the next start); a century at the most.
    public static let ageDaysRange = (1.0 / 24)...36_500

    private struct SettingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Swift.Decoder) throws {
        alerts = try AlertSettings(from: decoder)
        for (name, count, limit) in [
            ("keywords", alerts.keywords.count, Self.maxKeywordRules),
            ("mutedApps", alerts.mutedApps.count, Self.maxAppsPerList),
            ("allowedApps", alerts.allowedApps.count, Self.maxAppsPerList),
        ] where count > limit {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath + [SettingKey(stringValue: name)],
                debugDescription: "has \(count) entries; at most \(limit) are taken"))
        }
        // An empty span: quiet never, which is not what anyone who wrote it meant.
        if let quiet = alerts.quietHours, quiet.start == quiet.end {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath + [SettingKey(stringValue: "quietHours")],
                debugDescription: "start and end are both \(quiet.start), which would mean never quiet; leave quietHours out for none"))
        }
        let container = try decoder.container(keyedBy: Keys.self)
        burst = try container.decodeIfPresent(BurstLimiter.Limit.self, forKey: .burst) ?? .init()
        guard burst.isValid else {
            throw DecodingError.dataCorruptedError(forKey: .burst, in: container, debugDescription: "maxAlerts must be at least 1 and windowSeconds above 0 and at most \(Int(BurstLimiter.Limit.maxWindowSeconds)) (a day)")
        }
        retention = try container.decodeIfPresent(Retention.self, forKey: .retention) ?? .default
        // The message is placed at `retention`, so each limit names itself.
        for (name, positive) in [("maxCount", retention.maxCount >= 1), ("maxBytes", retention.maxBytes >= 1), ("maxAgeDays", retention.maxAgeDays > 0)] where !positive {
            throw DecodingError.dataCorruptedError(forKey: .retention, in: container, debugDescription: "\(name) must be above 0")
        }
        guard Self.ageDaysRange.contains(retention.maxAgeDays) else {
            throw DecodingError.dataCorruptedError(
                forKey: .retention, in: container,
                debugDescription: "maxAgeDays must be at least 0.0417 (an hour) and at most 36500, not \(retention.maxAgeDays)")
        }
        display = try container.decodeIfPresent(String.self, forKey: .display)
        // Checked here, so that `notifbridge policy` refuses what the accessory would.
        if let display, DisplayProfile(spec: display) == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .display, in: container,
                debugDescription: "\"\(display)\" is not LINESxCOLUMNS, e.g. 4x32 (each 1...\(DisplayProfile.maximumDimension))"
            )
        }
        hook = try container.decodeIfPresent(HookSettings.self, forKey: .hook)
        desktopNotifications = try container.decodeIfPresent(Bool.self, forKey: .desktopNotifications) ?? false
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        try alerts.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(burst, forKey: .burst)
        try container.encode(retention, forKey: .retention)
        try container.encodeIfPresent(display, forKey: .display)
        try container.encodeIfPresent(hook, forKey: .hook)
        try container.encode(desktopNotifications, forKey: .desktopNotifications)
    }

    /// Allowed keys per object, for the unknown-key check.
    private static let schema: [String: Set<String>] = [
        "": Set(AlertSettings.keys + Keys.allCases.map(\.rawValue)),
        "quietHours": ["start", "end"],
        "keywords": ["match", "action", "fields"],
        "burst": ["maxAlerts", "windowSeconds"],
        "retention": ["maxCount", "maxBytes", "maxAgeDays"],
        "hook": ["command", "timeoutSeconds", "on"],
    ]

    public struct Invalid: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "policy file \(path): \(reason)" }
    }

    /// A policy is a few hundred bytes; anything near this is not one.
    public static let maxFileLength = 1 << 20

    public static func load(path: String) throws -> PolicyFile {
        let data: Data
        do { data = try fileContents(path, limit: maxFileLength) } catch {
            throw Invalid(path: path, reason: "cannot be read: \(error)")
        }
        return try parse(data, path: path)
    }

    public static func parse(_ data: Data, path: String = "<inline>") throws -> PolicyFile {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: data) } catch {
            throw Invalid(path: path, reason: "is not valid JSON: \(JSONFileErrors.syntax(error))")
        }
        guard let top = parsed as? [String: Any] else {
            throw Invalid(path: path, reason: "is not a JSON object ({…} at the top)")
        }
        try checkKeys(top, at: "", path: path)
        for (key, value) in top {
            if let object = value as? [String: Any] {
                try checkKeys(object, at: key, path: path)
                try checkWholeNumbers(object, at: key, path: path)
            }
            if let array = value as? [[String: Any]] { try array.forEach { try checkKeys($0, at: key, path: path) } }
        }
        do {
            return try JSONDecoder().decode(PolicyFile.self, from: data)
        } catch let error as DecodingError {
            throw Invalid(path: path, reason: JSONFileErrors.describe(error, words: words))
        }
    }

    /// The values of each key that takes one of a fixed set of words.
    private static let words: [String: [String]] = [
        "keywords.action": [KeywordRule.Action.alert, .mute].map(\.rawValue),
        "keywords.fields": [KeywordRule.Field.title, .body].map(\.rawValue),
        "hook.on": [HookSettings.Trigger.alerts, .all].map(\.rawValue),
    ]

    /// Settings that count things. JSONDecoder refuses 1.5 or 1e20 for an Int without saying
    /// where ("The given data was not valid JSON"), so they are checked here first.
    private static let wholeNumbers: [String: [String]] = ["burst": ["maxAlerts"], "retention": ["maxCount", "maxBytes"]]

    private static func checkWholeNumbers(_ object: [String: Any], at key: String, path: String) throws {
        for name in wholeNumbers[key] ?? [] {
            if let number = object[name] as? NSNumber, number as? Int == nil {
                throw Invalid(path: path, reason: "\(key).\(name) must be a whole number (at most \(Int.max)), not \(number)")
            }
        }
    }

    private static func checkKeys(_ object: [String: Any], at key: String, path: String) throws {
        guard let allowed = schema[key] else { return }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            let place = key.isEmpty ? "" : " in \(key)"
            throw Invalid(path: path, reason: "unknown key \"\(unknown)\"\(place); expected one of \(allowed.sorted().joined(separator: ", "))")
        }
    }
}
