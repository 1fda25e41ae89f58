import Foundation
import NotifBridgeHostCore
import NotifBridgeScenario
import NotifBridgeANCS
import NotifBridgeTestSupport
import Testing

@Suite("Scenario files")
struct ScenarioFileTests {
    @Test("Steps and expectations parse, with the scenario's defaults")
    func parses() throws {
        let scenario = try ScenarioFile.parse("""
            name: sample
            source: com.example.chat
            app: Chat
            steps:
              - add: {id: a, title: Anna, body: Hi, level: time-sensitive}
              - focus: on
              - update: {id: a, body: Edited}
              - remove: {id: b, source: com.other}
              - remove-all
              - disconnect
              - disconnect: {during: {add: {id: big, attachment-bytes: 100}}}
              - reconnect
              - restart-accessory
              - reorder: [{update: {id: a, body: v2}}, {remove: a}]
              - settle
              - wait: 0.5
            expect:
              present: [a, {id: c, title: T, body: B}]
              absent: [{id: b, source: com.other}]
              alerted: [a]
              not-alerted: [c]
              count: 2
            """)
        let a = NotificationRef(source: "com.example.chat", id: "a")
        #expect(scenario.steps.count == 12)
        guard case .operation(.add(let add)) = scenario.steps[0] else {
            Issue.record("first step should be an add")
            return
        }
        #expect(add.ref == a && add.app == "Chat" && add.level == .timeSensitive)
        #expect(scenario.steps[1] == .focus(true))
        #expect(scenario.steps[3] == .operation(.remove(NotificationRef(source: "com.other", id: "b"))))
        #expect(scenario.steps[4] == .operation(.removeAll))
        #expect(scenario.steps[5] == .disconnect(during: nil))
        #expect(scenario.steps[8] == .restartAccessory)
        #expect(scenario.steps[11] == .wait(seconds: 0.5))
        #expect(scenario.restartsAccessory)
        #expect(scenario.expect.present.map(\.ref.id) == ["a", "c"])
        #expect(scenario.expect.present[1].title == "T")
        #expect(scenario.expect.count == 2)
    }

    @Test("Mistakes are refused with the line and what is wrong", arguments: [
        ("steps:\n  - add: {id: a, tittle: x}\n", "line 2: unknown key \"tittle\""),
        ("steps:\n  - jump: {id: a}\n", "line 2: unknown step \"jump\""),
        ("steps:\n  - focus: maybe\n", "line 2: focus: is on or off"),
        ("steps:\n  - reorder: [{remove: a}]\n", "reorder: a list of at least two calls"),
        ("steps:\n  - add: {id: ''}\n", "an empty notification id"),
        ("steps:\n  - add: {id: a, level: loud}\n", "level \"loud\" is not"),
        ("steps:\n  - add: {id: a, kind: fax}\n", "kind \"fax\""),
        ("name: x\n", "steps: a list of steps is required"),
        ("steps: [\n", "not YAML"),
        ("steps: []\nexpect: {count: -1}\n", "count: a number"),
        ("steps: []\nexpect: {shown: [a]}\n", "unknown key \"shown\" in expect"),
    ])
    func refusals(yaml: String, message: String) {
        #expect {
            try ScenarioFile.parse(yaml)
        } throws: { error in
            (error as? ScenarioFile.Invalid)?.description.contains(message) == true
        }
    }

    @Test("Limits: wait and attachment size at the limit parse, one more is refused")
    func limits() throws {
        _ = try ScenarioFile.parse("steps:\n  - wait: \(Int(ScenarioFile.maxWait))\n")
        #expect(throws: ScenarioFile.Invalid.self) { try ScenarioFile.parse("steps:\n  - wait: \(Int(ScenarioFile.maxWait) + 1)\n") }
        _ = try ScenarioFile.parse("steps:\n  - add: {id: a, attachment-bytes: \(ScenarioFile.maxAttachmentBytes)}\n")
        #expect(throws: ScenarioFile.Invalid.self) { try ScenarioFile.parse("steps:\n  - add: {id: a, attachment-bytes: \(ScenarioFile.maxAttachmentBytes + 1)}\n") }
    }

    /// Found while writing the scenario fuzz target: aliases repeat a reorder list in every step,
    /// so a 2 KB file asked for 30,000 calls with 256 KB attachments each (the harness timed out).
    @Test("Totals: calls and attachment bytes are bounded across the whole timeline, aliases included")
    func totals() throws {
        let list = "[" + Array(repeating: "*a", count: 200).joined(separator: ", ") + "]"
        let aliased = "steps:\n  - reorder: [&a {add: {id: x}}, *a]\n  - &r {reorder: \(list)}\n" + String(repeating: "  - *r\n", count: 50)
        #expect {
            try ScenarioFile.parse(aliased)
        } throws: { error in
            (error as? ScenarioFile.Invalid)?.description.contains("10202 calls; at most 10000, reorder lists included") == true
        }
        let heavy = "steps:\n  - &b {add: {id: x, attachment-bytes: \(ScenarioFile.maxAttachmentBytes)}}\n" + String(repeating: "  - *b\n", count: 64)
        #expect {
            try ScenarioFile.parse(heavy)
        } throws: { error in
            (error as? ScenarioFile.Invalid)?.description.contains("attachment-bytes add up to") == true
        }
        _ = try ScenarioFile.parse("steps:\n  - &b {add: {id: x, attachment-bytes: \(ScenarioFile.maxAttachmentBytes)}}\n" + String(repeating: "  - *b\n", count: 63))
    }

    /// Yams sorts a mapping's keys to report duplicates, and comparing nested keys compares
    /// everything in them: nested complex keys made a 2 KB file take tens of seconds.
    @Test("Complex keys are refused before parsing, naming the line", arguments: [
        ("steps:\n  - ? add\n    : x\n", 2, "explicit key"),
        ("? - - ? - -\n  ? - x\n", 1, "explicit key"),
        ("steps: []\n[a, b]: c\n", 2, "flow collection"),
        ("steps: []\n{a: b}: c\n", 2, "flow collection"),
        ("x: {[a]: b}\n", 1, "flow collection"),
        ("base: &k {a: 1}\n*k : 2\n", 2, "alias"),
        ("base: &k a\nsteps:\n  - {*k: 1}\n", 3, "alias"),
    ])
    func complexKeys(yaml: String, line: Int, what: String) {
        #expect {
            _ = try ScenarioFile.parse(yaml)
        } throws: { error in
            "\(error)".contains("line \(line):") && "\(error)".contains(what)
        }
    }

    @Test("Question marks, brackets and aliases in values, quotes, comments and block scalars are fine", arguments: [
        "name: what? really\nsteps:\n  - add: {id: m1, title: \"? [x]: y\", body: 'it''s ? ok'}  # ? not a key\n",
        "name: n\nsteps:\n  - add:\n      id: m1\n      body: |\n        ? a question\n        [a]: b\n        *c : d\n",
        "name: n\nsteps:\n  - add: {id: m1}\n  - reorder: [{update: &u {id: m1, body: x}}, {update: *u}]\n",
    ])
    func notComplexKeys(yaml: String) throws {
        _ = try ScenarioFile.parse(yaml)
    }

    @Test("File size: the limit is read, one byte more is refused before parsing")
    func fileSize() throws {
        let head = "steps: []\n#"
        let fits = head + String(repeating: "x", count: ScenarioFile.maxFileLength - head.utf8.count)
        _ = try ScenarioFile.parse(fits)
        #expect(throws: ScenarioFile.Invalid.self) { try ScenarioFile.parse(fits + "x") }
    }

    @Test("Focus: ordinary notifications go silent, time-sensitive, critical and calls still alert", arguments: [
        (NotificationSpec.Level.active, HostAlerting.Kind.notification, false, true),
        (.active, .notification, true, false),
        (.passive, .notification, false, false),
        (.passive, .notification, true, false),
        (.timeSensitive, .notification, true, true),
        (.critical, .notification, true, true),
        (.active, .incomingCall, true, true),
    ])
    func focus(level: NotificationSpec.Level, kind: HostAlerting.Kind, focus: Bool, alerts: Bool) {
        let spec = NotificationSpec(ref: .init(source: "s", id: "i"), app: "A", level: level, kind: kind)
        let alerting = spec.alerting(focus: focus)
        #expect(alerting.shouldAlert == alerts)
        #expect(alerting.suppressedByFocus == (focus && level == .active && kind == .notification))
    }

    @Test("Expectations report every difference")
    func expectationFailures() {
        let ref = { (id: String) in NotificationRef(source: "s", id: id) }
        var expect = Expectations()
        expect.present = [.init(ref: ref("a"), title: "T", body: nil), .init(ref: ref("missing"))]
        expect.absent = [ref("b")]
        expect.alerted = [ref("a")]
        expect.notAlerted = [ref("b")]
        expect.count = 1
        let observed = [
            ObservedNotification(ref: ref("a"), title: "Other", body: nil, alerted: false),
            ObservedNotification(ref: ref("b"), title: nil, body: nil, alerted: true),
        ]
        #expect(expect.failures(in: observed) == [
            "s/a has title \"Other\", expected \"T\"",
            "s/missing should be shown but is not",
            "s/b should not be shown but is",
            "s/a should have alerted but did not",
            "s/b alerted but should not have",
            "the accessory shows 2 notification(s), expected 1",
        ])
        #expect(Expectations().failures(in: observed) == [])
    }
}

@Suite("ANCS scenario files")
struct ANCSScenarioTests {
    static var files: [String] {
        let directory = TestFixtures.scenarios.appendingPathComponent("ancs")
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
    }

    @Test("Every file in Scenarios/ancs parses", arguments: files)
    func shipped(_ name: String) throws {
        let text = try String(contentsOf: TestFixtures.scenarios.appendingPathComponent("ancs").appendingPathComponent(name), encoding: .utf8)
        let scenario = try ANCSScenario.parse(text)
        #expect(!scenario.steps.isEmpty)
    }

    @Test("Steps, bare words and names parse")
    func steps() throws {
        let scenario = try ANCSScenario.parse("""
            apps: {com.apple.MobileSMS: Messages}
            steps:
              - post: {uid: 7, app: com.apple.MobileSMS, title: Anna, category: incoming-call, flags: [important], negative: Decline, pre-existing: true}
              - remove: 7
              - wait: 0.25
              - disconnect
              - disconnect: {during-reply: true}
              - reconnect
              - expect-action: {uid: 7, action: negative}
            """)
        #expect(scenario.apps == ["com.apple.MobileSMS": "Messages"])
        guard case .post(let notification, preExisting: true) = scenario.steps[0] else { Issue.record("no post"); return }
        #expect(notification.category == .incomingCall)
        #expect(notification.flags == [.important, .negativeAction])
        #expect(scenario.steps[1...] == [.remove(uid: 7), .wait(.milliseconds(250)), .disconnect(duringReply: false), .disconnect(duringReply: true), .reconnect, .expectAction(uid: 7, .negative)])
    }

    @Test("Mistakes say which step and what was wrong", arguments: [
        ("steps:\n  - post: {uid: 1, app: a, category: gossip}", "step 1: category \"gossip\""),
        ("steps:\n  - wait: 1\n  - jump", "step 2: \"jump\" is not disconnect or reconnect"),
        ("steps:\n  - {remove: 1, wait: 2}", "step 1: a step is exactly one of"),
        ("steps:\n  - expect-action: {uid: 1, action: maybe}", "step 1: action is positive or negative"),
        ("steps:\n  - wait: -1", "step 1: wait is 0 to 3600 seconds"),
    ])
    func invalid(_ yaml: String, message: String) {
        #expect {
            try ANCSScenario.parse(yaml)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
