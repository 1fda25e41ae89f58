import Foundation
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeStore
import NotifBridgeWire
import Synchronization

/// The accessory's policy file, a file a person writes: parsed, printed and parsed again, then
/// used the way the daemon uses it, since a value can parse and still break its user.
enum PolicyTarget {
    static let now = Date(timeIntervalSince1970: 1_778_490_000)

    /// Parses a policy file; one that parses must print (`notifbridge policy`) as a file that
    /// parses to the same policy, and every value must be usable by the part that reads it.
    static func run(_ bytes: [UInt8]) {
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
        retainOnce(add, under: policy.retention)
    }

    /// Retention values already checked in this process, at most `maxChecked`.
    private static let checked = Mutex<Set<Retention>>([])
    private static let maxChecked = 4096

    /// Checks each retention value once per process. The check depends on the value alone (the
    /// same two events at the same dates), so running it again can find nothing new; and opening
    /// and migrating a store for it was most of the harness's time: 820 inputs a second with it
    /// on every parsed input, 9,700 with it once per value (one minute each, one core, the
    /// soak's corpus of 2026-11-27).
    private static func retainOnce(_ add: Notifbridge_V1_AddNotification, under retention: Retention) {
        let isNew = checked.withLock { seen in
            if seen.count >= maxChecked { seen.removeAll(keepingCapacity: true) }
            return seen.insert(retention).inserted
        }
        if isNew { retain(add, under: retention) }
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
