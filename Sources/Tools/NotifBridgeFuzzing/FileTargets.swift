import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeHostCore
import NotifBridgeScenario
import NotifBridgeStore
import NotifBridgeWire

/// Files a person writes: scenario YAML and the accessory's policy file. Each is parsed, then
/// used the way its reader uses it, since a value can parse and still break its user.
enum FileTargets {
    static let now = Date(timeIntervalSince1970: 1_778_490_000)

    /// Parses a scenario, then builds every call the player would make from it, one at a time.
    static func scenario(_ bytes: [UInt8]) {
        guard let scenario = try? ScenarioFile.parse(String(decoding: bytes, as: UTF8.self)) else { return }
        precondition(scenario.steps.count <= ScenarioFile.maxSteps, "\(scenario.steps.count) steps")
        var focus = false
        for step in scenario.steps {
            switch step {
            case .operation(let spec): build(spec, focus: focus)
            case .disconnect(let spec): spec.map { build($0, focus: focus) }
            case .reorder(let specs): specs.forEach { build($0, focus: focus) }
            case .focus(let on): focus = on
            case .wait(let seconds): precondition((0...ScenarioFile.maxWait).contains(seconds), "wait \(seconds)")
            case .reconnect, .restartAccessory, .settle: break
            }
        }
        let expected = scenario.expect.present.map(\.ref) + scenario.expect.absent + scenario.expect.alerted + scenario.expect.notAlerted
        precondition(expected.allSatisfy { !$0.id.isEmpty }, "an expectation names an empty id")
    }

    private static func build(_ spec: OperationSpec, focus: Bool) {
        if case .add(let notification) = spec, let bytes = notification.attachmentBytes {
            precondition((1...ScenarioFile.maxAttachmentBytes).contains(bytes), "attachment of \(bytes) bytes")
        }
        do {
            _ = try DataProvider.event(for: spec.operation(focus: focus), now: now)
        } catch {
            preconditionFailure("a parsed scenario call does not serialise: \(error)")
        }
    }

    /// Parses a policy file; one that parses must print (`notifbridge policy`) as a file that
    /// parses to the same policy, and every value must be usable by the part that reads it.
    static func policy(_ bytes: [UInt8]) {
        guard let policy = try? PolicyFile.parse(Data(bytes)) else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let printed = try? encoder.encode(policy) else {
            preconditionFailure("a parsed policy does not encode")
        }
        do {
            let again = try PolicyFile.parse(printed)
            precondition(again == policy, "a policy changed through printing")
        } catch {
            preconditionFailure("a printed policy does not parse: \(error)")
        }
        use(policy)
    }

    /// What the daemon does with each setting: the burst window, the alert rules at three times
    /// of day, the display profile, and retention on a store.
    private static func use(_ policy: PolicyFile) {
        var burst = BurstLimiter(limit: policy.burst)
        let instant = ContinuousClock.now
        burst.advance(burst.step(forAlertAt: instant))
        burst.advance(burst.step(forAlertAt: instant + .seconds(1)))
        if let summary = burst.summaryStep(at: instant + .seconds(3600)) { burst.advance(summary) }
        var add = Notifbridge_V1_AddNotification()
        add.notification = sample
        add.alerting = .with {
            $0.shouldAlert = true
            $0.notificationCanAlert = true
            $0.kind = .notification
        }
        for minute in [0, 12 * 60, 23 * 60 + 59] {
            let decision = AlertPolicy.decide(AlertInput(add, minuteOfDay: minute), settings: policy.alerts)
            precondition(!decision.reason.isEmpty, "a decision without a reason")
        }
        if let spec = policy.display, let profile = DisplayProfile(spec: spec) {
            let lines = render(title: sample.title, body: sample.body.plainText, profile: profile)
            precondition(lines.count <= profile.lines, "rendered \(lines.count) lines on a \(profile) screen")
        }
        retain(add, under: policy.retention)
    }

    private static let sample = WireNotification.with {
        $0.id = WireNotificationID(source: "com.apple.MobileSMS", notification: "msg-1")
        $0.sourceName = "Messages"
        $0.title = "Anna"
        $0.body = .with { $0.runs = [.with { $0.text = "Sale: lunch at 12:30? 🍜 urgent" }] }
    }


    /// Applies two adds a day apart, so retention's age, count and size limits all run.
    private static func retain(_ add: Notifbridge_V1_AddNotification, under retention: Retention) {
        do {
            let store = try AccessoryStore.inMemory(retention: retention)
            let parameters = KeyExchangeParameters(cipherSuite: "XWing", version: "Version1", identifier: "policy", encapsulatedKey: Data([0]))
            try store.saveExchange(parameters, keyID: [0], now: now)
            for (index, id) in ["msg-1", "msg-2"].enumerated() {
                var event = HostEvent()
                event.sequence = UInt64(index + 1)
                var copy = add
                copy.notification.id.notificationIdentifier = id
                event.add = copy
                var burst = BurstLimiter(limit: .unlimited)
                _ = try store.apply(event, exchangeID: parameters.exchangeID, now: now.addingTimeInterval(Double(index) * 86_400),
                                    conditions: AlertConditions(settings: .default, minuteOfDay: 12 * 60, now: .now), burst: &burst)
            }
        } catch {
            preconditionFailure("retention \(retention) broke the store: \(error)")
        }
    }
}
