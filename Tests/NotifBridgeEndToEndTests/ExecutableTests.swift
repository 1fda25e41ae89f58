import Foundation
import NotifBridgeTestSupport
import Subprocess
import SystemPackage
import Testing

/// The `notifbridge` executable itself, which `swift test` builds beside the test bundle.
@Suite("The notifbridge executable")
struct ExecutableTests {
    /// The executable beside the test bundle; `swift test` builds it, so its absence is a failure.
    static func executable() throws -> String {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("notifbridge").path
        try #require(FileManager.default.isExecutableFile(atPath: path), "swift test builds \(path)")
        return path
    }

    /// A mistake in the options is found before anything is printed, not below the policy.
    @Test("policy: a wrong --at is refused before the policy is printed", arguments: [
        (["--at", "25:00", "--sample", "Examples/sample-call.json"], "--at 25:00 is not HH:MM"),
        (["--at", "22:00"], "--at is the time of --sample's decision"),
    ])
    func policyRefusesFirst(arguments: [String], message: String) async throws {
        let policy = try await Self.run(["policy"] + arguments)
        #expect(policy.status != 0)
        #expect(policy.output.isEmpty, "printed before refusing: \(policy.output)")
        #expect(policy.errors.contains(message), "\(policy.errors)")
    }

    /// A sample that cannot be decided for is refused before the policy is printed, as a wrong
    /// --at is: the mistake is not left below a screenful of JSON.
    @Test("policy: a --sample that is not one add is refused before the policy is printed", arguments: [
        (#"{"op": "removeAll"}"#, "must be an add operation; only adds alert"),
        (#"[{"op": "removeAll"}]"#, "the top level must be an object {...}"),
    ])
    func policySampleRefusedFirst(json: String, message: String) async throws {
        let directory = try TemporaryDirectory("policy-sample")
        defer { directory.remove() }
        let file = directory.path + "/sample.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        let policy = try await Self.run(["policy", "--state", directory.path, "--sample", file])
        #expect(policy.status != 0)
        #expect(policy.output.isEmpty, "printed before refusing: \(policy.output)")
        #expect(policy.errors.contains(message), "\(policy.errors)")
    }

    /// Files given as a pipe (`--config <(…)`, /dev/stdin) read as files do; Foundation refused
    /// them as "Permission denied".
    @Test("policy --config /dev/stdin reads the pipe")
    func policyFromPipe() async throws {
        let run = try await Self.run(["policy", "--config", "/dev/stdin"], input: Data(#"{"silentMode": true}"#.utf8))
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains(#""silentMode" : true"#), "\(run.output)")
    }

    /// The policy's strings are the owner's text, shown, never obeyed: a C1 control sequence
    /// introducer and a bidi override in a keyword and an app ID come out as JSON escapes, in the
    /// policy and in the decision whose reason quotes the keyword.
    @Test("policy shows the file's control characters and bidi overrides escaped")
    func policyShownSafely() async throws {
        let directory = try TemporaryDirectory("policy-safe")
        defer { directory.remove() }
        let config = directory.path + "/policy.json"
        let policy = #"{"keywords": [{"match": "a\u009b31mRED", "action": "alert"}], "mutedApps": ["com.x\u202e"]}"#
        try Data(policy.utf8).write(to: URL(fileURLWithPath: config))
        let sample = directory.path + "/sample.json"
        let add = #"{"op": "add", "notification": {"source": "com.y", "id": "1", "sourceName": "Y", "title": "a\u009b31mRED"}}"#
        try Data(add.utf8).write(to: URL(fileURLWithPath: sample))
        let run = try await Self.run(["policy", "--config", config, "--sample", sample])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains(#""match" : "a\u009b31mRED""#), "\(run.output)")
        #expect(run.output.contains(#""com.x\u202e""#), "\(run.output)")
        let raw = run.output.unicodeScalars.filter { $0.value == 0x9B || $0.value == 0x202E }
        #expect(raw.isEmpty, "raw controls reached the terminal: \(run.output.debugDescription)")
    }

    /// An operation file's mistake is named by its place before anything connects; a file
    /// without one gets as far as connecting (port 1: nothing listens there).
    @Test("phone forward --file: unknown keys, wrong words and missing keys are refused by their place", arguments: [
        (#"[{"op": "add", "notification": {"source": "a", "id": "1", "sourceName": "A", "titel": "x"}}]"#,
         "unknown key [0].notification.titel, which would be ignored"),
        (#"[{"op": "remove", "source": "a", "id": "1", "alerting": {}}]"#, "unknown key [0].alerting"),
        (#"[{"op": "add", "notification": {"source": "a", "id": "1", "sourceName": "A", "actions": [{"id": "r", "type": "reply"}]}}]"#,
         #"[0].notification.actions[0].type: "reply" is not one of dismiss, background, textInput"#),
        (#"[{"op": "add", "notification": {"source": "a", "sourceName": "A"}}]"#, "[0].notification.id is required"),
        (#"{"op": "removeAll"}"#, "the top level must be a list [...]"),
        (#""removeAll""#, "the top level must be a list [...]"),
        (#"[{"op": "removeAll"}"#, "is not valid JSON: Unexpected end of file"),
        // A key is the file's text: a control sequence in it is shown, not sent to the terminal.
        (#"[{"op": "removeAll", "\u001b]0;owned\u0007": 1}]"#, #"unknown key [0].\u{1B}]0;owned\u{7}, which would be ignored"#),
        (#"[{"op": "add", "notification": {"source": "a", "id": "1", "sourceName": "A", "title": null, "fixture": "x"}}]"#,
         "cannot connect to the accessory at 127.0.0.1:1: Connection refused (errno 111)"),
    ])
    func operationFileMistakes(json: String, message: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("operations-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let phone = try await Self.run(["phone", "forward", "--file", file.path, "--port", "1"])
        #expect(phone.status != 0)
        let prefix = message.hasPrefix("cannot") ? "" : message.hasPrefix("is not valid JSON") ? "--file \(file.path) " : "--file \(file.path): "
        #expect(phone.errors.contains("Error: " + prefix + message), "\(phone.errors)")
        #expect(!phone.errors.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }, "\(phone.errors)")
    }

    /// The phone's --port at both ends of the range: inside it, the connection is tried (and
    /// refused: nothing listens on 1 or 65535 here); outside it, the option is refused.
    @Test("phone --port: 1 and 65535 are tried, 0 and 65536 refused", arguments: [
        ("1", "cannot connect to the accessory at 127.0.0.1:1"), ("65535", "cannot connect to the accessory at 127.0.0.1:65535"),
        ("0", "--port 0 is not a TCP port an accessory listens on (1...65535)"),
        ("65536", "--port 65536 is not a TCP port an accessory listens on (1...65535)"),
    ])
    func phonePort(port: String, message: String) async throws {
        let phone = try await Self.run(["phone", "forward", "--title", "x", "--port=\(port)", "--timeout", "2"])
        #expect(phone.status != 0)
        #expect(phone.errors.contains(message), "\(phone.errors)")
    }

    /// Values a command cannot honour are refused by name before anything starts; each limit is
    /// shown from both sides where the side inside can be reached without starting anything
    /// (it then fails later, on the nonexistent file or the closed port 1).
    @Test("Flags a command cannot honour are refused by name, and their limits are taken", arguments: [
        (["demo", "--pause", "60.5"], "--pause must be 0...60 seconds, not 60.5"),
        (["demo", "--pause", "nan"], "--pause must be 0...60 seconds, not nan"),
        (["phone", "forward", "--title", "x", "--linger", "3600.5"], "--linger must be 0...3600 seconds, not 3600.5"),
        (["phone", "forward", "--title", "x", "--linger", "inf"], "--linger must be 0...3600 seconds, not inf"),
        (["phone", "forward", "--title", "x", "--linger", "3600", "--port", "1"], "cannot connect to the accessory at 127.0.0.1:1"),
        (["phone", "forward", "--title", "x", "--discovery-timeout", "120.5"], "--discovery-timeout must be above 0 and at most 120 seconds, not 120.5"),
        (["phone", "forward", "--title", "x", "--discovery-timeout", "120", "--port", "1"], "cannot connect to the accessory at 127.0.0.1:1"),
        (["phone", "load", "--rate", "0.09"], "--rate must be 0 (as fast as possible) or 0.1...1000000, not 0.09"),
        (["phone", "load", "--rate", "0.1", "--count", "1", "--port", "1"], "cannot connect to the accessory at 127.0.0.1:1"),
        (["phone", "load", "--drain", "inf"], "--drain must be above 0 and at most 3600 seconds, not inf"),
        (["phone", "load", "--drain", "3600.5"], "--drain must be above 0 and at most 3600 seconds, not 3600.5"),
        (["phone", "load", "--drain", "3600", "--count", "1", "--port", "1"], "cannot connect to the accessory at 127.0.0.1:1"),
        (["phone", "send", "--linger", "inf", "/nonexistent.json"], "--linger must be 0...3600 seconds, not inf"),
        (["phone", "send", "--linger", "3600.5", "/nonexistent.json"], "--linger must be 0...3600 seconds, not 3600.5"),
        (["phone", "send", "--linger", "3600", "/nonexistent.json"], "cannot read /nonexistent.json: No such file or directory"),
        (["phone", "forward", "--file", "/nonexistent.json", "--op", "remove", "--id", "x"], "--op, --id build one operation from flags, which --file replaces"),
        (["phone", "forward", "--file", "/nonexistent.json", "--source", "com.a"], "--source builds one operation from flags, which --file replaces"),
        (["phone", "forward", "--id", "", "--title", "x"], "--id must not be empty"),
        (["accessory", "--host", ""], "--host must name an address to listen on"),
        (["accessory", "--service-name", String(repeating: "n", count: 64)], "--service-name is 64 bytes; a DNS-SD instance name is at most 63"),
        (["accessory", "--service-name", String(repeating: "n", count: 63), "--state", ""], "--state must name a directory"),
        (["accessory", "--service-name", ""], "--service-name must not be empty"),
        (["accessory", "--service-name", "a\tb"], "--service-name must not hold control characters"),
        (["phone", "--transport", "lan", "--service-name", String(repeating: "é", count: 32), "--title", "x"], "--service-name is 64 bytes; a DNS-SD instance name is at most 63"),
        // A negative number after the option is its value, not an option of its own.
        (["accessory", "--port", "-1"], "--port -1 is not a TCP port (0...65535)"),
        (["phone", "forward", "--title", "x", "--port", "-1"], "--port -1 is not a TCP port an accessory listens on (1...65535)"),
        (["relay", "serve", "--port", "-1"], "--port -1 is not a TCP port (0...65535)"),
        (["respond", "list", "--limit", "-1"], "--limit must be at least 1; it was -1"),
        (["accessory", "--max-connections", "-5"], "--max-connections must be 1...1024, not -5"),
        (["phone", "forward", "--title", "x", "--suite", "p256", "--internet-pairing", "/nonexistent-dir/pairing.json"], "--internet-pairing saves the keys of an X-Wing exchange; --suite p256 alone cannot make one (give --suite xwing)"),
        (["accessory", "--state", "/tmp"], "--state /tmp is a directory other users share (mode 1777), which this command would make its own (0700); give it a directory inside, e.g. /tmp/notifbridge"),
        (["relay", "serve", "--state", "/tmp"], "--state /tmp is a directory other users share (mode 1777)"),
        (["respond", "dismiss", String(repeating: "s", count: 256), "id"], "the source is 256 bytes; a stored one is at most 255"),
        (["respond", "dismiss", "--state", "/nonexistent-state", String(repeating: "s", count: 255), "id"], "no accessory is listening on /nonexistent-state/"),
        (["respond", "reply", "com.a", String(repeating: "i", count: 256), "reply", "hi"], "the notification identifier is 256 bytes; a stored one is at most 255"),
        (["relay", "serve", "--apns-ca", "/ca.pem"], "--apns-ca is for APNs, which needs --apns-key, --apns-key-id and --apns-team-id"),
        (["relay", "serve", "--host", ""], "--host must name an address to listen on"),
        (["phone", "play", "/nonexistent.yaml", "--restart-command", " "], "--restart-command is empty"),
        (["accessory", "--json", "--display", "4x32"], "--display shapes the terminal's lines; --json prints every field whole: give one or the other"),
        (["accessory", "--commit-window", "-1"], "--commit-window must be 0...100 milliseconds, not -1"),
        (["accessory", "--commit-window", "101"], "--commit-window must be 0...100 milliseconds, not 101"),
        // Negative numbers are the option's value, not an unknown option ("Missing value").
        (["relay", "serve", "--max-connections", "-5"], "--max-connections must be 1...65536, not -5"),
        (["relay", "serve", "--queue-bytes", "-1"], "not -1"),
        (["relay", "serve", "--push-interval", "-1"], "not -1"),
        (["phone", "load", "--count", "-1"], "--count must be 1...10000000, not -1"),
        (["phone", "load", "--group", "-1"], "--group must be 1...10000, not -1"),
        (["phone", "load", "--drain", "-1"], "--drain must be above 0 and at most 3600 seconds, not -1.0"),
        (["accessory", "--commit-window", "9223372036854775807"], "--commit-window must be 0...100 milliseconds, not 9223372036854775807"),
        (["accessory", "--display", "-4x32"], #"display "-4x32" is not LINESxCOLUMNS"#),
        (["phone", "forward", "--title", "x", "--timeout", "-1"], "--timeout must be above 0 and at most 600"),
        (["phone", "forward", "--title", "x", "--linger", "-1"], "--linger must be 0...3600 seconds, not -1.0"),
        (["phone", "send", "--linger", "-1", "/nonexistent.json"], "--linger must be 0...3600 seconds, not -1.0"),
        (["policy", "--at", "-1:00"], "--at -1:00 is not HH:MM (00:00 to 23:59)"),
        (["demo", "--pause", "-1"], "--pause must be 0...60 seconds, not -1.0"),
        // A text that begins with "-" is the text.
        (["phone", "forward", "--title", "-5 min late", "--body", "-", "--port", "1"], "cannot connect to the accessory at 127.0.0.1:1"),
        (["respond", "reply", "a", "b", "reply", String(repeating: "x", count: 1025)], "a reply is at most 1024 bytes; this one is 1025"),
        (["respond", "reply", "--state", "/nonexistent-state", "a", "b", "reply", String(repeating: "x", count: 1024)], "no accessory is listening on /nonexistent-state/"),
        (["accessory", "--dashboard", "127.0.0.1:65536"], "'127.0.0.1:65536' is invalid for '--dashboard <dashboard>': 65536 is not a TCP port (0...65535)"),
        (["accessory", "--dashboard", "127.0.0.1:65535", "--state", ""], "--state must name a directory"),
        (["accessory", "--dashboard", "127.0.0.1"], "'127.0.0.1' is invalid for '--dashboard <dashboard>': not HOST:PORT"),
        (["accessory", "--port", "7431", "--dashboard", "127.0.0.1:7431"], "--dashboard 127.0.0.1:7431 and the link's --host 127.0.0.1 --port 7431 are one address: give the dashboard another port"),
        (["accessory", "--host", "0.0.0.0", "--port", "7431", "--dashboard", "127.0.0.1:7431"], "--dashboard 127.0.0.1:7431 and the link's --host 0.0.0.0 --port 7431 are one address"),
        (["accessory", "--host", "::1", "--port", "7431", "--dashboard", "[::]:7431"], "--dashboard [::]:7431 and the link's --host ::1 --port 7431 are one address"),
        (["accessory", "--port", "7431", "--dashboard", "127.0.0.1:7432", "--state", ""], "--state must name a directory"),
        (["accessory", "--dashboard", ":7421"], "':7421' is invalid for '--dashboard <dashboard>': no host before the port"),
        (["accessory", "--state", ""], "--state must name a directory"),
        (["respond", "list", "--state", ""], "--state must name a directory"),
        (["relay", "register", "watch-1", "--state", ""], "--state must name a directory"),
        (["policy", "--state", ""], "--state must name a directory"),
        (["accessory", "--relay", "ws://:80", "--relay-id", "a", "--relay-token-file", "/nonexistent"], "--relay ws://:80 names no host"),
        (["accessory", "--relay", "http://127.0.0.1:80", "--relay-id", "a", "--relay-token-file", "/nonexistent"], "--relay must be ws://HOST:PORT or wss://HOST"),
        (["accessory", "--relay", "ws://127.0.0.1:65536", "--relay-id", "a", "--relay-token-file", "/nonexistent"], "--relay ws://127.0.0.1:65536: 65536 is not a TCP port (1...65535)"),
        (["accessory", "--relay", "ws://127.0.0.1:80", "--relay-id", "a", "--relay-token-file", "/nonexistent", "--relay-ca", "/ca.pem"], "--relay-ca is for a wss:// --relay"),
        (["accessory", "--relay-ca", "/ca.pem"], "--relay-ca is for a wss:// --relay"),
        (Self.internetPhone(relay: "http://127.0.0.1:65536"), "--relay http://127.0.0.1:65536: 65536 is not a TCP port (1...65535)"),
        (Self.internetPhone(relay: "http://127.0.0.1:65535"), "cannot read --relay-token-file /nonexistent-token: No such file or directory"),
    ])
    func refusedFlags(arguments: [String], message: String) async throws {
        let run = try await Self.run(arguments)
        #expect(run.status != 0)
        #expect(run.errors.contains(message), "\(run.errors)")
    }

    /// `forward` is `phone`'s default subcommand, so every word after `phone` that is not a
    /// subcommand lands in it: each mistake is named as itself, as a usage error, and nothing
    /// connects (port 1 would say so).
    @Test("phone: a subcommand after an option, a misspelt option, a stray word and empty texts are named", arguments: [
        (["phone", "--port", "1", "send", "x.json"], "'send' is a subcommand of phone, and only comes right after it: notifbridge phone send [options]"),
        (["phone", "--title", "x", "--port", "1", "play", "s.yaml"], "'play' is a subcommand of phone"),
        (["phone", "--titel", "x", "--port", "1"], "Unknown option '--titel'. Did you mean '--title'?"),
        (["phone", "--title", "x", "--port", "1", "bogus"], "unexpected argument 'bogus': forward takes options only"),
        (["phone", "--port", "1"], "give --file, or a --title and/or --body that is not empty, for an add"),
        (["phone", "forward", "--title", "", "--port", "1"], "give --file, or a --title and/or --body that is not empty, for an add"),
        (["phone", "forward", "--op", "update", "--id", "a", "--title", "", "--body", "", "--port", "1"], "a --title and/or --body that is not empty, for an update"),
        (["phone", "forward", "--source", "", "--title", "x", "--port", "1"], "--source must name the app"),
        (["phone", "send", "--source", "", "--port", "1", "/nonexistent.json"], "--source must name the app"),
        (["phone", "send", "--id", "", "--port", "1", "/nonexistent.json"], "--id must not be empty"),
    ])
    func phoneWordMistakes(arguments: [String], message: String) async throws {
        let run = try await Self.run(arguments)
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(run.errors.contains("Usage: notifbridge phone "), "\(run.errors)")
    }

    /// `phone send`'s tables are read as operation files are: a word outside its set is named
    /// with the set (it was "Cannot initialize Kind from invalid String value"), and a key the
    /// model would pass over is refused (it was ignored), before anything connects.
    @Test("phone send --categories and --strings: wrong words, unknown keys and wrong kinds are refused by their place", arguments: [
        ("--categories", #"{"chat":[{"id":"a","title":"A","type":"bogus"}]}"#, #"chat[0].type: "bogus" is not one of dismiss, background, textInput"#),
        ("--categories", #"{"chat":[{"id":"a","titel":"A","type":"background"}]}"#, "unknown key chat[0].titel, which would be ignored"),
        ("--categories", #"{"chat":5}"#, "chat must be a list [...]"),
        ("--strings", #"{"greeting":5}"#, "greeting must be a string"),
        ("--categories", #"{"chat":[{"id":"a","title":"A","type":"background"}]}"#, "cannot connect to the accessory at 127.0.0.1:1"),
    ])
    func sendTables(option: String, table: String, message: String) async throws {
        let directory = try TemporaryDirectory("send-tables")
        defer { directory.remove() }
        let tablePath = directory.path + "/table.json", payload = directory.path + "/payload.json"
        try Data(table.utf8).write(to: URL(fileURLWithPath: tablePath))
        try Data(#"{"aps":{"alert":"hi","category":"chat"}}"#.utf8).write(to: URL(fileURLWithPath: payload))
        let run = try await Self.run(["phone", "send", option, tablePath, "--port", "1", payload])
        #expect(run.status != 0)
        // The last case is taken, and fails only on the closed port.
        let expected = message.hasPrefix("cannot connect") ? message : "\(option) \(tablePath): \(message)"
        #expect(run.errors.contains(expected), "\(run.errors)")
    }

    /// The relay's files are read before the daemon starts: a wrong one stops the start with a
    /// reason, and the key and the store are not made.
    @Test("accessory --relay-ca: a file it cannot use is refused before anything is made", arguments: [
        ("directory", "cannot read --relay-ca FILE: it is a directory, not a file"),
        ("missing", "cannot read --relay-ca FILE: No such file or directory"),
        ("junk", "--relay-ca FILE holds no PEM certificate (-----BEGIN CERTIFICATE-----)"),
    ])
    func relayCAFile(kind: String, message: String) async throws {
        let directory = try TemporaryDirectory("relay-ca")
        defer { directory.remove() }
        let token = directory.path + "/token"
        try Data("token\n".utf8).write(to: URL(fileURLWithPath: token))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
        let ca = directory.path + "/ca.pem"
        switch kind {
        case "directory": try FileManager.default.createDirectory(atPath: ca, withIntermediateDirectories: false)
        case "junk": try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: ca))
        default: break
        }
        let state = directory.path + "/state"
        let run = try await Self.run([
            "accessory", "--state", state, "--port", "0", "--relay", "wss://relay.invalid", "--relay-id", "watch-1",
            "--relay-token-file", token, "--relay-ca", ca,
        ])
        #expect(run.status != 0)
        #expect(run.errors.contains("Error: " + message.replacingOccurrences(of: "FILE", with: ca)), "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: state), "the state directory was made")
    }

    /// The advertised name is checked with the other flags, before the key and the store are
    /// made, and before the system bus is looked for.
    @Test("accessory --transport ble --name: a name that cannot be advertised is refused before anything is made", arguments: [
        ("", "--name must be 1...29 bytes in UTF-8; \"\" is 0"),
        (String(repeating: "n", count: 30), "--name must be 1...29 bytes in UTF-8; \"\(String(repeating: "n", count: 30))\" is 30"),
        (String(repeating: "é", count: 15), "is 30"),
    ])
    func bluetoothName(name: String, message: String) async throws {
        let directory = try TemporaryDirectory("ble-name")
        defer { directory.remove() }
        let state = directory.path + "/state"
        let run = try await Self.run(["accessory", "--transport", "ble", "--name", name, "--state", state])
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: state), "the state directory was made")
    }

    /// Something that takes the connection and says nothing (a relay's HTTP port waits for a
    /// request): the phone says so once, and prints no "link closed" of its own teardown first.
    @Test("phone at a port where nothing speaks: one error with the hint, no link line before it")
    func phoneAtSilentPort() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 4) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let phone = try await Self.run(["phone", "forward", "--title", "x", "--port", "\(port)", "--timeout", "1"])
        #expect(phone.status != 0)
        #expect(phone.errors.contains("timed out waiting for the key exchange (1.0 seconds): the connection is open but nothing answered; is a NotifBridge accessory listening there?"), "\(phone.errors)")
        #expect(!phone.output.contains("link closed"), "\(phone.output)")
    }

    static func internetPhone(relay: String) -> [String] {
        [
            "phone", "forward", "--transport", "internet", "--title", "x", "--relay", relay, "--relay-id", "watch-1",
            "--relay-token-file", "/nonexistent-token", "--internet-pairing", "/nonexistent-pairing",
        ]
    }

    /// `relay serve --port` at both ends of the range. 65535 passes the port's check and meets
    /// the next one (so nothing starts); NIO would take 65536 as port 0 and -1 as 65535.
    @Test("relay serve --port: 65535 passes, 65536 and -1 are refused", arguments: [
        ("--port=65535", "--max-connections must be 1...65536, not 0"),
        ("--port=65536", "--port 65536 is not a TCP port (0...65535)"),
        ("--port=-1", "--port -1 is not a TCP port (0...65535)"),
    ])
    func relayPort(port: String, message: String) async throws {
        let directory = try TemporaryDirectory("relay-port")
        defer { directory.remove() }
        let relay = try await Self.run(["relay", "serve", "--state", directory.path, port, "--max-connections", "0"])
        #expect(relay.status != 0)
        #expect(relay.errors.contains("Error: " + message), "\(relay.errors)")
    }

    /// With both suites offered, a P-256 accessory used to get the notification, and only then
    /// was the pairing found unusable.
    @Test("phone --internet-pairing offers X-Wing alone: a P-256 accessory refuses the exchange and gets nothing")
    func pairingOffersXWingOnly() async throws {
        let directory = try TemporaryDirectory("pairing-p256")
        defer { directory.remove() }
        let (process, port, _, _) = try await Self.startAccessory(state: directory.path + "/state", options: ["--suite", "p256"])
        defer { process.terminate() }
        let pairing = directory.path + "/pairing.json"
        let phone = try await Self.run(["phone", "--port", "\(port)", "--title", "x", "--internet-pairing", pairing, "--timeout", "5"])
        #expect(phone.status != 0)
        #expect(phone.errors.contains("the host accepts XWing; this accessory's key is P256"), "\(phone.errors)")
        #expect(!phone.output.contains("sent add"), "\(phone.output)")
        #expect(!FileManager.default.fileExists(atPath: pairing))
    }

    /// One operation the accessory could never take used to end the run: the ones before it
    /// were printed as sent but never acknowledged, and the ones after never went.
    @Test("phone --file: an operation too large for the accessory is reported and skipped; the others are stored")
    func oneOperationNotSent() async throws {
        let directory = try TemporaryDirectory("not-sent")
        defer { directory.remove() }
        let (process, port, _, _) = try await Self.startAccessory(state: directory.path + "/state")
        defer { process.terminate() }
        let file = directory.path + "/operations.json"
        let big = String(repeating: "b", count: 300_000)
        try Data(#"""
            [{"op": "add", "notification": {"source": "a", "id": "before", "sourceName": "A", "title": "x"}},
             {"op": "add", "notification": {"source": "a", "id": "big", "sourceName": "A", "body": "\#(big)"}},
             {"op": "add", "notification": {"source": "a", "id": "after", "sourceName": "A", "title": "y"}}]
            """#.utf8).write(to: URL(fileURLWithPath: file))
        let phone = try await Self.run(["phone", "--port", "\(port)", "--file", file])
        #expect(phone.status == 1)
        let lines = phone.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("phone │ not sent: add a/big: notification too large: ") }, "\(phone.output)")
        #expect(lines.contains { $0.hasPrefix("phone │ sent add a/after as #") }, "\(phone.output)")
        #expect(lines.contains("phone │ 2 forwarded, 2 acknowledged, 2 alerted; 1 not sent"), "\(phone.output)")
        let listed = try await Self.run(["respond", "list", "--state", directory.path + "/state"])
        #expect(listed.output.contains("before") && listed.output.contains("after") && !listed.output.contains("big"), "\(listed.output)")
    }

    /// The key was read whole, whatever its length (800 MB took 1.7 GB and 40 s to refuse).
    @Test("relay serve --apns-key: a file at the limit is read and judged as a key, one byte longer is refused unread", arguments: [0, 1])
    func apnsKeyLimit(over: Int) async throws {
        let directory = try TemporaryDirectory("apns-key")
        defer { directory.remove() }
        let key = directory.path + "/AuthKey.p8"
        try Data(repeating: UInt8(ascii: "k"), count: 64 * 1024 + over).write(to: URL(fileURLWithPath: key))
        let relay = try await Self.run([
            "relay", "serve", "--state", directory.path + "/state", "--port", "0",
            "--apns-key", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
        ])
        #expect(relay.status != 0)
        if over == 0 {
            #expect(relay.errors.contains("Error: --apns-key \(key): "), "\(relay.errors)")
        } else {
            #expect(relay.errors.contains("Error: cannot read --apns-key \(key): it is longer than 65536 bytes"), "\(relay.errors)")
        }
    }

    /// With APNs configured, a start that fails (here on a state path that is a file) still
    /// shuts the APNs client down: a debug build traps on one released running.
    @Test("relay serve with APNs: a start that fails says why and exits 1")
    func apnsStartFailure() async throws {
        let directory = try TemporaryDirectory("apns-start")
        defer { directory.remove() }
        let state = directory.path + "/state"
        try Data("not a directory\n".utf8).write(to: URL(fileURLWithPath: state))
        let relay = try await Self.run([
            "relay", "serve", "--state", state, "--port", "0",
            "--apns-key", StandInFixtures.directory.appendingPathComponent("apns-auth-key.p8").path, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
        ])
        #expect(relay.status == 1, "\(relay.errors)")
        #expect(relay.errors.contains("cannot open the relay's database"), "\(relay.errors)")
    }

    /// It used to connect, send, then write the pairing over whatever the path held (the
    /// accessory's key, in the report).
    @Test("phone --internet-pairing at a file that is not a pairing is refused before connecting, the file untouched")
    func pairingPathRefusedFirst() async throws {
        let directory = try TemporaryDirectory("pairing-victim")
        defer { directory.remove() }
        let victim = directory.path + "/identity-xwing.key"
        let contents = #"{"format":1,"secret":"AAEC","suite":"XWing"}"#
        try Data(contents.utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o600)
        // Port 1: nothing listens there, so a phone that got as far as connecting would say so.
        let phone = try await Self.run(["phone", "--port", "1", "--title", "oops", "--internet-pairing", victim])
        #expect(phone.status != 0)
        #expect(phone.errors.contains("will not save the internet pairing over \(victim): "), "\(phone.errors)")
        #expect(!phone.errors.contains("connect"), "\(phone.errors)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == contents)
    }

    /// A new pairing's directory is checked before connecting: the exchange's keys used to be
    /// made, the notification sent, and only then the save failed. A path in a directory that
    /// exists is taken (and the phone fails later, at the closed port 1).
    @Test("phone --internet-pairing in a directory that is not there is refused before connecting", arguments: [
        ("missing/pairing.json", "is not a directory"),
        ("file/pairing.json", "Not a directory"),
        ("pairing.json", "cannot connect to the accessory at 127.0.0.1:1"),
    ])
    func pairingDirectory(relative: String, message: String) async throws {
        let directory = try TemporaryDirectory("pairing-directory")
        defer { directory.remove() }
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: directory.path + "/file"))
        let path = directory.path + "/" + relative
        let phone = try await Self.run(["phone", "--port", "1", "--title", "x", "--internet-pairing", path])
        #expect(phone.status != 0)
        #expect(phone.errors.contains(message), "\(phone.errors)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// The control socket's failures read as the system's message, not NIO's description of it.
    @Test("respond without an accessory, and an accessory whose control socket path is taken, say what is wrong")
    func controlSocketFailures() async throws {
        let directory = try TemporaryDirectory("control-socket")
        defer { directory.remove() }
        let respond = try await Self.run(["respond", "list", "--state", directory.path])
        #expect(respond.status != 0)
        #expect(respond.errors.contains("no accessory is listening on \(directory.path)/control.sock (No such file or directory (errno 2))"), "\(respond.errors)")

        try FileManager.default.createDirectory(atPath: directory.path + "/control.sock", withIntermediateDirectories: false)
        let accessory = try await Self.run(["accessory", "--state", directory.path, "--port", "0", "--exit-with-parent"])
        #expect(accessory.status != 0)
        #expect(
            accessory.errors.contains("cannot open the control socket \(directory.path)/control.sock: something that is not a socket is at that path"),
            "\(accessory.errors)"
        )
    }

    /// The simulated iPhone's own lines quote the ids and sources of the operations it sends,
    /// which come from a file: a control sequence there is shown, not sent to the terminal.
    @Test("phone forward --file: control characters in a file's ids are shown escaped")
    func phoneLinesAreTerminalSafe() async throws {
        let directory = try TemporaryDirectory("phone-lines")
        defer { directory.remove() }
        let (process, port, _, _) = try await Self.startAccessory(state: directory.path)
        defer { process.terminate() }
        let file = directory.path + "/operations.json"
        try Data(#"[{"op": "remove", "source": "com.evil\u001b[31mapp", "id": "x\u0007"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        let phone = try await Self.run(["phone", "forward", "--file", file, "--port", "\(port)"])
        #expect(phone.output.contains(#"sent remove com.evil\u{1B}[31mapp/x\u{7} as #1"#), "\(phone.output)")
        #expect(!phone.output.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }, "\(phone.output)")
    }

    /// Starts `notifbridge accessory` on a free loopback port and reads the port from its first
    /// line; the caller stops it. A `launcher` (`env` with options, say) runs it, if given.
    static func startAccessory(state: String, options: [String] = [], launcher: [String] = []) async throws -> (process: Process, port: Int, output: Pipe, errors: Pipe) {
        let process = Process()
        let command = launcher + [try executable(), "accessory", "--state", state, "--port", "0", "--exit-with-parent"] + options
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let firstLine = try await firstLine(of: output)
        if !firstLine.contains(UInt8(ascii: "\n")) { process.terminate() }
        try #require(firstLine.contains(UInt8(ascii: "\n")), "the accessory exited before listening")
        let line = String(decoding: firstLine, as: UTF8.self)
        let port = line.split(separator: " ").dropFirst(2).first?.split(separator: ":").last.flatMap { Int($0) }
        if port == nil { process.terminate() }
        return (process, try #require(port, "no port in \(line)"), output, errors)
    }

    /// What a pipe carries up to its first line break, or to its end if none comes: read on a
    /// thread of its own, since the read blocks.
    static func firstLine(of pipe: Pipe) async throws -> Data {
        try await offPool {
            var read = Data()
            while !read.contains(UInt8(ascii: "\n")) {
                let data = pipe.fileHandleForReading.availableData
                if data.isEmpty { break }
                read.append(data)
            }
            return read
        }
    }

    /// Runs blocking work (a pipe read, a wait for a process) on a thread of its own, not on
    /// Swift's cooperative pool, whose two threads here every test shares.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Waits for `process` to exit, off the cooperative pool.
    static func waitForExit(_ process: Process) async {
        _ = try? await offPool { process.waitUntilExit() }
    }

    /// What `run` keeps of each stream; a command printing more is a failure of its own.
    static let outputLimit = 4 << 20

    /// Runs the executable to its end: its exit status (128 + the signal, if one ended it) and
    /// what it printed. swift-subprocess waits for the process and its pipes off Swift's
    /// cooperative pool: blocking calls there (`waitUntilExit`, `readDataToEndOfFile`), one for
    /// each of the eighty processes a run starts at once, held both of a two-core machine's
    /// threads, and the suite's key-exchange and HTTP waits starved behind them.
    static func run(_ arguments: [String], input: Data? = nil) async throws -> (status: Int32, output: String, errors: String) {
        let result = try await Subprocess.run(
            .path(FilePath(try executable())),
            arguments: Arguments(arguments),
            input: .array([UInt8](input ?? Data())),
            output: .string(limit: outputLimit),
            error: .string(limit: outputLimit)
        )
        let status: Int32 = switch result.terminationStatus {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
        return (status, result.standardOutput ?? "", result.standardError ?? "")
    }

    /// Alive and not a zombie (an orphan's new parent may not have reaped it yet).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        return !stat[afterName.upperBound...].hasPrefix("Z")
    }
}
