import Foundation
import NotifBridgeAccessory
import Testing

/// Errors in hand-written JSON files, named by their place in the file.
@Suite struct JSONFileErrorsTests {
    private struct Rule: Codable {
        enum Action: String, Codable { case mute, alert }
        var match: String
        var action: Action
        var weight: Int?
        var labels: [String]?
    }

    private struct File: Codable {
        var enabled: Bool?
        var rules: [Rule]?
        var limits: [String: Double]?
    }

    private func message(_ json: String) -> String? {
        do {
            _ = try JSONDecoder().decode(File.self, from: Data(json.utf8))
            return nil
        } catch let error as DecodingError {
            return JSONFileErrors.describe(error, words: ["rules.action": ["mute", "alert"]])
        } catch {
            return "\(error)"
        }
    }

    @Test("Each kind of decoding error reads as a place and what belongs there", arguments: [
        (#"{"enabled": "yes"}"#, "enabled must be true or false"),
        (#"{"rules": {}}"#, "rules must be a list [...]"),
        (#"{"rules": [[]]}"#, "rules[0] must be an object {...}"),
        (#"{"rules": [{"match": 1, "action": "mute"}]}"#, "rules[0].match must be a string"),
        (#"{"rules": [{"match": "a", "action": "mute", "weight": "x"}]}"#, "rules[0].weight must be a number"),
        (#"{"rules": [{"match": "a", "action": "mute", "labels": ["x", 2]}]}"#, "rules[0].labels[1] must be a string"),
        (#"{"rules": [{"match": "a", "action": "mute"}, {"action": "alert"}]}"#, "rules[1].match is required"),
        (#"{"rules": [{"match": "a", "action": "shout"}]}"#, #"rules[0].action: "shout" is not one of mute, alert"#),
        (#"{"rules": [{"match": "a", "action": null}]}"#, "rules[0].action must be a string"),
        (#"[]"#, "the top level must be an object {...}"),
    ])
    func describe(json: String, expected: String) {
        #expect(message(json) == expected)
    }

    @Test("A word outside its set without a list of words keeps the decoder's text")
    func wordWithoutList() throws {
        do {
            _ = try JSONDecoder().decode(File.self, from: Data(#"{"rules": [{"match": "a", "action": "shout"}]}"#.utf8))
            Issue.record("decoded")
        } catch let error as DecodingError {
            #expect(JSONFileErrors.describe(error).hasPrefix("rules[0].action: "))
            #expect(JSONFileErrors.describe(error).contains("shout"))
        }
    }

    /// The first key the model passed over, found by encoding what it decoded again.
    private func unknown(_ json: String, annotations: Set<String> = []) throws -> String? {
        let value = try JSONDecoder().decode(File.self, from: Data(json.utf8))
        let input = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let understood = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        return JSONFileErrors.firstUnknownKey(in: input, understood: understood, annotations: annotations)
    }

    @Test("Keys the model does not read are found by their place", arguments: [
        (#"{"enabled": true}"#, nil),
        (#"{"enabeld": true}"#, "enabeld"),
        (#"{"rules": [{"match": "a", "action": "mute"}, {"match": "b", "action": "alert", "wieght": 2}]}"#, "rules[1].wieght"),
        (#"{"limits": {"any": 1}}"#, nil),
        (#"{"rules": [{"match": "a", "action": "mute", "weight": null}], "note": null}"#, nil),
        (#"{"rules": [], "zeta": 1, "alpha": 2}"#, "alpha"),
    ] as [(String, String?)])
    func unknownKeys(json: String, expected: String?) throws {
        #expect(try unknown(json) == expected)
    }

    @Test("Annotations are allowed at any depth, and only they")
    func annotations() throws {
        let json = #"{"fixture": "x", "rules": [{"match": "a", "action": "mute", "fixture": "y"}]}"#
        #expect(try unknown(json) == "fixture")
        #expect(try unknown(json, annotations: ["fixture"]) == nil)
        #expect(try unknown(#"{"rules": [{"match": "a", "action": "mute", "fixtures": "y"}]}"#, annotations: ["fixture"]) == "rules[0].fixtures")
    }
}
