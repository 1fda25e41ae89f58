import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeDisplay
import NotifBridgeHostCore
import NotifBridgeWire

/// The policy file from --config, else <state>/policy.json if present, else the defaults.
func loadPolicy(_ path: String?, stateDirectory: String) throws -> PolicyFile {
    if let path { return try PolicyFile.load(path: path) }
    let beside = policyPath(stateDirectory: stateDirectory)
    return FileManager.default.fileExists(atPath: beside) ? try PolicyFile.load(path: beside) : .default
}

/// The policy file an accessory reads when it is given none.
func policyPath(stateDirectory: String) -> String {
    (stateDirectory as NSString).appendingPathComponent("policy.json")
}

struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Show the effective alert policy, and what it decides for a sample notification."
    )

    @Option(help: "Policy file to check (JSON).") var config: String?
    @Option(help: "Directory whose policy.json is used when --config is not given.") var state: String = defaultStateDirectory()
    @Option(help: "A JSON file with one add operation (the `phone --file` format) to decide for.") var sample: String?
    @Option(parsing: .unconditional, help: "Local time for the decision, HH:MM (default: now).") var at: String?

    /// Checked before anything is printed, so that a mistake is not found below the policy.
    func validate() throws {
        try checkStateOption(state)
        if let at, TimeOfDay(at) == nil { throw ValidationError("--at \(at) is not HH:MM (00:00 to 23:59)") }
        if at != nil, sample == nil { throw ValidationError("--at is the time of --sample's decision: give --sample too") }
    }

    func run() async throws {
        let policy: PolicyFile
        do { policy = try loadPolicy(config, stateDirectory: state) } catch { throw CommandFailure("\(error)") }
        // The sample is read before anything is printed, so that its mistake is not found below
        // the policy.
        let added = try sample.map(Self.readAdd)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let beside = policyPath(stateDirectory: state)
        if config == nil, !FileManager.default.fileExists(atPath: beside) {
            print("no policy file: \(terminalSafe(beside)) does not exist, so the accessory uses the defaults")
        }
        // The file's strings are shown, not obeyed: JSONEncoder leaves C1 controls and bidi
        // overrides raw, and a terminal would act on them.
        print("effective policy:")
        print(jsonEscapingTerminalControls(String(decoding: try encoder.encode(policy), as: UTF8.self)))
        guard let (notification, alerting) = added else { return }

        let minute: Int
        if let at, let time = TimeOfDay(at) {
            minute = time.minuteOfDay
        } else {
            minute = AccessoryDaemon.localMinuteOfDay()
        }
        var add = Notifbridge_V1_AddNotification()
        add.notification = try DataProvider.serialize(notification, now: Date())
        add.alerting = DataProvider.serialize(alerting)
        // Planned as a first posting into an empty burst window: what the accessory would do.
        let plan = AlertPlanner.plan(
            .add(add), at: Revision(epoch: 1, sequence: 1), existing: nil, removeAllWatermark: nil,
            conditions: AlertConditions(settings: policy.alerts, minuteOfDay: minute, now: .now), burst: BurstLimiter(limit: policy.burst)
        )
        guard let decision = plan.decision else { throw CommandFailure("no decision for --sample \(sample ?? "")") }
        print("\ndecision for \(terminalSafe(notification.source))/\(terminalSafe(notification.id)) at \(TimeOfDay.format(minute)):")
        print(jsonEscapingTerminalControls(String(decoding: try encoder.encode(decision), as: UTF8.self)))
    }

    /// The one add operation in a `--sample` file.
    static func readAdd(_ path: String) throws -> (HostNotification, HostAlerting) {
        guard case .add(let notification, let alerting) = try OperationFile.read(HostOperation.self, path: path, option: "--sample") else {
            throw CommandFailure("--sample \(path) must be an add operation; only adds alert")
        }
        return (notification, alerting)
    }
}

extension TimeOfDay {
    static func format(_ minute: Int) -> String {
        (minute / 60 < 10 ? "0" : "") + "\(minute / 60):" + (minute % 60 < 10 ? "0" : "") + "\(minute % 60)"
    }
}
