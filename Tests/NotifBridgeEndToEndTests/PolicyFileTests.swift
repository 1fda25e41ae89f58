import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeTestSupport
import Testing

@Suite("Policy file")
struct PolicyFileTests {
    @Test("A full file parses into the settings it spells out")
    func full() throws {
        let policy = try PolicyFile.parse(Data("""
            {
              "silentMode": true,
              "quietHours": {"start": "22:30", "end": "06:45"},
              "mutedApps": ["com.example.games"],
              "allowedApps": ["com.apple.mobilephone"],
              "keywords": [{"match": "urgent", "action": "alert"}, {"match": "sale", "action": "mute", "fields": ["title"]}],
              "burst": {"maxAlerts": 3, "windowSeconds": 30},
              "retention": {"maxCount": 100, "maxBytes": 1000000, "maxAgeDays": 2},
              "display": "4x32",
              "hook": {"command": ["/usr/local/bin/buzz", "--short"], "timeoutSeconds": 2, "on": "all"},
              "desktopNotifications": true
            }
            """.utf8))
        #expect(policy.alerts.silentMode)
        #expect(policy.alerts.quietHours == QuietHours(start: TimeOfDay("22:30")!, end: TimeOfDay("06:45")!))
        #expect(policy.alerts.keywords.last == KeywordRule(match: "sale", action: .mute, fields: [.title]))
        #expect(policy.burst == .init(maxAlerts: 3, windowSeconds: 30))
        #expect(policy.retention.maxCount == 100)
        #expect(policy.hook?.command == ["/usr/local/bin/buzz", "--short"])
        #expect(policy.hook?.on == .all)
        #expect(policy.desktopNotifications)
    }

    @Test("An empty object gives the defaults")
    func empty() throws {
        #expect(try PolicyFile.parse(Data("{}".utf8)) == .default)
    }

    @Test("A display at its bounds is taken", arguments: ["1x1", "1000x1000"])
    func displayBounds(spec: String) throws {
        #expect(try PolicyFile.parse(Data(#"{"display": "\#(spec)"}"#.utf8)).display == spec)
    }

    /// A file that cannot be read says why in the system's words (Foundation on Linux called a
    /// directory "NSCocoaErrorDomain error 256").
    @Test("A policy path that is a directory, or missing, says which")
    func unreadable() throws {
        let directory = try TemporaryDirectory("policy-path")
        defer { directory.remove() }
        for (path, reason) in [(directory.path, "it is a directory, not a file"), (directory.path + "/none.json", "No such file or directory")] {
            #expect(throws: PolicyFile.Invalid.self) { try PolicyFile.load(path: path) }
            do { _ = try PolicyFile.load(path: path) } catch {
                #expect("\(error)".hasPrefix("policy file \(path): cannot be read: \(reason)"), "\(error)")
            }
        }
    }

    /// A file is read to its limit and no further: one of exactly 1 MiB is taken, one byte more
    /// is refused, and so is a device that never ends; a pipe reads as a file does.
    @Test("A policy file at its length limit is taken, one byte more refused; /dev/zero too")
    func lengthLimit() throws {
        let directory = try TemporaryDirectory("policy-length")
        defer { directory.remove() }
        let body = Array(#"{"silentMode": true}"#.utf8)
        for (length, taken) in [(PolicyFile.maxFileLength, true), (PolicyFile.maxFileLength + 1, false)] {
            let path = directory.path + "/policy-\(length).json"
            try Data(body + [UInt8](repeating: 0x20, count: length - body.count)).write(to: URL(fileURLWithPath: path))
            if taken {
                #expect(try PolicyFile.load(path: path).alerts.silentMode)
            } else {
                #expect { try PolicyFile.load(path: path) } throws: { "\($0)".hasSuffix("cannot be read: it is longer than 1048576 bytes") }
            }
        }
        #expect { try PolicyFile.load(path: "/dev/zero") } throws: { "\($0)".hasSuffix("cannot be read: it is longer than 1048576 bytes") }
    }

    /// The other side of the refusals below: each limit's own value is taken.
    @Test("A hook's timeout of 300 s and retention limits of 1 are taken")
    func smallestAndLargestLimits() throws {
        let policy = try PolicyFile.parse(Data(#"{"hook": {"command": ["x"], "timeoutSeconds": 300}, "retention": {"maxCount": 1, "maxBytes": 1}}"#.utf8))
        #expect(policy.hook?.timeoutSeconds == 300)
        #expect(policy.retention.maxCount == 1 && policy.retention.maxBytes == 1)
    }

    @Test("The lists' and the age's own limits are taken (one past each is refused below)")
    func listAndAgeLimits() throws {
        let rules = Array(repeating: #"{"match": "x", "action": "mute"}"#, count: PolicyFile.maxKeywordRules).joined(separator: ",")
        let apps = Array(repeating: #""a""#, count: PolicyFile.maxAppsPerList).joined(separator: ",")
        let json = #"{"keywords": [\#(rules)], "mutedApps": [\#(apps)], "allowedApps": [\#(apps)], "retention": {"maxAgeDays": \#(1.0 / 24)}}"#
        let policy = try PolicyFile.parse(Data(json.utf8))
        #expect(policy.alerts.keywords.count == 256 && policy.alerts.mutedApps.count == 1024 && policy.alerts.allowedApps.count == 1024)
        #expect(policy.retention.maxAgeDays == 1.0 / 24)
        #expect(try PolicyFile.parse(Data(#"{"retention": {"maxAgeDays": 36500}}"#.utf8)).retention.maxAgeDays == 36_500)
    }

    @Test("A count may be as large as Int.max (one more is refused below)")
    func largestCount() throws {
        #expect(try PolicyFile.parse(Data(#"{"retention": {"maxBytes": 9223372036854775807}}"#.utf8)).retention.maxBytes == .max)
    }

    @Test("Mistakes are named", arguments: [
        (#"{"quietHour": {}}"#, "unknown key \"quietHour\""),
        (#"{"quietHours": {"start": "22:00", "end": "7:00"}}"#, "quietHours.end"),
        (#"{"quietHours": {"start": "22:00", "stop": "07:00"}}"#, "unknown key \"stop\" in quietHours"),
        (#"{"quietHours": {"start": "22:00", "end": "22:00"}}"#, "quietHours: start and end are both 22:00, which would mean never quiet; leave quietHours out for none"),
        (#"{"keywords": [{"match": "", "action": "mute"}]}"#, "non-empty match"),
        (#"{"keywords": [{"match": "x", "action": "shout"}]}"#, #"keywords[0].action: "shout" is not one of alert, mute"#),
        (#"{"keywords": [{"match": "x", "action": "mute", "fields": ["body", "titel"]}]}"#, #"keywords[0].fields[1]: "titel" is not one of title, body"#),
        (#"{"keywords": [{"action": "mute"}]}"#, "keywords[0].match is required"),
        (#"{"keywords": {"match": "x"}}"#, "keywords must be a list [...]"),
        (#"{"hook": {"command": ["x"], "on": "sometimes"}}"#, #"hook.on: "sometimes" is not one of alerts, all"#),
        (#"{"burst": {"maxAlerts": 0}}"#, "burst: maxAlerts must be at least 1"),
        (#"{"burst": {"windowSeconds": 61e90}}"#, "burst: maxAlerts must be at least 1 and windowSeconds above 0 and at most 86400"),
        (#"{"burst": {"windowSeconds": 86400.5}}"#, "windowSeconds above 0 and at most 86400"),
        (#"{"hook": {"command": []}}"#, "hook.command: needs at least the program to run"),
        (#"{"hook": {"command": ["x"], "timeoutSeconds": 300.5}}"#, "hook.timeoutSeconds: must be above 0 and at most 300"),
        (#"{"hook": {"command": ["x"], "timeoutSeconds": 0}}"#, "hook.timeoutSeconds: must be above 0 and at most 300"),
        (#"{"retention": {"maxBytes": 0}}"#, "retention: maxBytes must be above 0"),
        (#"{"retention": {"maxAgeDays": 0}}"#, "retention: maxAgeDays must be above 0"),
        (#"{"retention": {"maxAgeDays": 1e-300}}"#, "retention: maxAgeDays must be at least 0.0417 (an hour) and at most 36500, not 1e-300"),
        (#"{"retention": {"maxAgeDays": 0.0416}}"#, "retention: maxAgeDays must be at least 0.0417 (an hour)"),
        (#"{"retention": {"maxAgeDays": 36500.5}}"#, "and at most 36500, not 36500.5"),
        (#"{"keywords": [\#(Array(repeating: #"{"match": "x", "action": "mute"}"#, count: 257).joined(separator: ","))]}"#, "keywords: has 257 entries; at most 256 are taken"),
        (#"{"mutedApps": [\#(Array(repeating: #""a""#, count: 1025).joined(separator: ","))]}"#, "mutedApps: has 1025 entries; at most 1024 are taken"),
        (#"{"allowedApps": [\#(Array(repeating: #""a""#, count: 1025).joined(separator: ","))]}"#, "allowedApps: has 1025 entries"),
        (#"{"silentMode": "yes"}"#, "silentMode must be true or false"),
        (#"{"burst": []}"#, "burst must be an object {...}"),
        (#"{"burst": {"windowSeconds": "60"}}"#, "burst.windowSeconds must be a number"),
        (#"{"mutedApps": [1]}"#, "mutedApps[0] must be a string"),
        (#"{"retention": {"maxCount": 1.5}}"#, "retention.maxCount must be a whole number"),
        (#"{"retention": {"maxBytes": 9223372036854775808}}"#, "retention.maxBytes must be a whole number (at most 9223372036854775807), not 9223372036854775808"),
        (#"[]"#, "not a JSON object"),
        (#"{,}"#, "is not valid JSON: Invalid value around character 1."),
        (#"{"display": "4by32"}"#, "display: \"4by32\" is not LINESxCOLUMNS"),
        (#"{"display": "0x32"}"#, "display: \"0x32\" is not LINESxCOLUMNS"),
        (#"{"display": "4x1001"}"#, "each 1...1000"),
    ])
    func mistakes(json: String, expected: String) {
        do {
            _ = try PolicyFile.parse(Data(json.utf8), path: "policy.json")
            Issue.record("\(json) was accepted")
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
            #expect("\(error)".hasPrefix("policy file policy.json: "))
        }
    }
}
