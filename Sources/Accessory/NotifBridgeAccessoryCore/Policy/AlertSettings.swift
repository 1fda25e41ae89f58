import Foundation

/// The accessory owner's alerting preferences, read from the policy file at start.
public struct AlertSettings: Codable, Sendable, Hashable {
    /// Like the iPhone's ring/silent switch: no sound, haptics still on. Critical alerts and
    /// sounds that ignore silent mode still play.
    public var silentMode: Bool
    /// Local times during which only time-sensitive, critical, call, timer, allowed-app and
    /// keyword-alert notifications alert.
    public var quietHours: QuietHours?
    /// Apps (bundle ids) that never alert; their notifications are still stored and listed.
    public var mutedApps: [String]
    /// Apps that alert even during quiet hours (iOS's own Focus still applies).
    public var allowedApps: [String]
    /// Case-insensitive substring rules on title and body.
    public var keywords: [KeywordRule]

    public init(silentMode: Bool = false, quietHours: QuietHours? = nil, mutedApps: [String] = [], allowedApps: [String] = [], keywords: [KeywordRule] = []) {
        self.silentMode = silentMode
        self.quietHours = quietHours
        self.mutedApps = mutedApps
        self.allowedApps = allowedApps
        self.keywords = keywords
    }

    public static let `default` = AlertSettings()

    private enum CodingKeys: String, CodingKey, CaseIterable { case silentMode, quietHours, mutedApps, allowedApps, keywords }

    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        silentMode = try container.decodeIfPresent(Bool.self, forKey: .silentMode) ?? false
        quietHours = try container.decodeIfPresent(QuietHours.self, forKey: .quietHours)
        mutedApps = try container.decodeIfPresent([String].self, forKey: .mutedApps) ?? []
        allowedApps = try container.decodeIfPresent([String].self, forKey: .allowedApps) ?? []
        keywords = try container.decodeIfPresent([KeywordRule].self, forKey: .keywords) ?? []
    }

    public static let keys = CodingKeys.allCases.map(\.rawValue)
}

/// A daily span of local time, "22:00" to "07:00"; it may wrap past midnight.
public struct QuietHours: Codable, Sendable, Hashable {
    public var start: TimeOfDay
    public var end: TimeOfDay

    public init(start: TimeOfDay, end: TimeOfDay) {
        self.start = start
        self.end = end
    }

    /// Whether `minute` (0...1439 after local midnight) falls inside; the end is exclusive.
    public func contains(minuteOfDay minute: Int) -> Bool {
        if start.minuteOfDay <= end.minuteOfDay {
            return (start.minuteOfDay..<end.minuteOfDay).contains(minute)
        }
        return minute >= start.minuteOfDay || minute < end.minuteOfDay
    }
}

/// "HH:MM" in 24-hour local time.
public struct TimeOfDay: Codable, Sendable, Hashable, CustomStringConvertible {
    public let minuteOfDay: Int

    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        minuteOfDay = hour * 60 + minute
    }

    public init(from decoder: any Swift.Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = TimeOfDay(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\"\(text)\" is not a time of day in 24-hour HH:MM form"))
        }
        self = value
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public var description: String {
        let hour = minuteOfDay / 60, minute = minuteOfDay % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

/// "Mute anything mentioning 'sale'", "always alert on 'urgent'".
public struct KeywordRule: Codable, Sendable, Hashable {
    public enum Action: String, Codable, Sendable { case mute, alert }
    public enum Field: String, Codable, Sendable { case title, body }

    public var match: String
    public var action: Action
    public var fields: [Field]

    public init(match: String, action: Action, fields: [Field] = [.title, .body]) {
        self.match = match
        self.action = action
        self.fields = fields
    }

    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        match = try container.decode(String.self, forKey: .match)
        guard !match.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .match, in: container, debugDescription: "a keyword rule needs a non-empty match")
        }
        action = try container.decode(Action.self, forKey: .action)
        fields = try container.decodeIfPresent([Field].self, forKey: .fields) ?? [.title, .body]
    }

    func matches(title: String, body: String) -> Bool {
        fields.contains { field in
            (field == .title ? title : body).range(of: match, options: .caseInsensitive) != nil
        }
    }
}
