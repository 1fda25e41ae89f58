import NotifBridgeRelayCore
import Testing

@Suite("What an operator may set on a relay")
struct RelaySettingsTests {
    /// One setting's value, the rest at their defaults, and the setting refused (nil: accepted).
    struct Case: Sendable, CustomStringConvertible {
        var use = RelaySettings.RateUse.pushes
        var burst = 20
        var intervalSeconds = 3.0
        var queuedMessages = 10_000
        var queuedBytes = 64 << 20
        var timeToLiveSeconds = 604_800
        var refused: RelaySettingError.Setting?

        var description: String {
            "\(use) burst \(burst), interval \(intervalSeconds) s, \(queuedMessages) messages, \(queuedBytes) bytes, "
                + "ttl \(timeToLiveSeconds) s: \(refused.map { "\($0.rawValue) refused" } ?? "accepted")"
        }
    }

    static let largestMessage = RelayLimits().maxMessageLength

    @Test("Each bound and one past it", arguments: [
        Case(),
        Case(burst: 1), Case(burst: 0, refused: .pushBurst),
        Case(burst: 100_000), Case(burst: 100_001, refused: .pushBurst),
        Case(intervalSeconds: 0.001), Case(intervalSeconds: 0.000_999, refused: .pushInterval),
        Case(intervalSeconds: 3_600), Case(intervalSeconds: 3_600.001, refused: .pushInterval),
        Case(intervalSeconds: .nan, refused: .pushInterval), Case(intervalSeconds: .infinity, refused: .pushInterval),
        Case(intervalSeconds: -1, refused: .pushInterval),
        Case(use: .posts, burst: 1), Case(use: .posts, burst: 0, refused: .postBurst),
        Case(use: .posts, burst: 100_000), Case(use: .posts, burst: 100_001, refused: .postBurst),
        Case(use: .posts, intervalSeconds: 0.001), Case(use: .posts, intervalSeconds: 0.000_999, refused: .postInterval),
        Case(use: .posts, intervalSeconds: 3_600), Case(use: .posts, intervalSeconds: 3_600.001, refused: .postInterval),
        Case(queuedMessages: 1), Case(queuedMessages: 0, refused: .queuedMessages),
        Case(queuedMessages: 1_000_000), Case(queuedMessages: 1_000_001, refused: .queuedMessages),
        Case(queuedBytes: largestMessage), Case(queuedBytes: largestMessage - 1, refused: .queuedBytes),
        Case(queuedBytes: 1 << 30), Case(queuedBytes: (1 << 30) + 1, refused: .queuedBytes),
        Case(timeToLiveSeconds: 60), Case(timeToLiveSeconds: 59, refused: .timeToLive),
        Case(timeToLiveSeconds: 2_592_000), Case(timeToLiveSeconds: 2_592_001, refused: .timeToLive),
    ])
    func bounds(_ example: Case) {
        do throws(RelaySettingError) {
            let rate = try RelaySettings.rate(of: example.use, burst: example.burst, intervalSeconds: example.intervalSeconds)
            let limits = try RelaySettings.limits(
                queuedMessages: example.queuedMessages, queuedBytes: example.queuedBytes, timeToLiveSeconds: example.timeToLiveSeconds
            )
            #expect(example.refused == nil)
            #expect(rate == RateLimit(burst: example.burst, interval: .seconds(example.intervalSeconds)))
            #expect(limits.maxQueuedMessages == example.queuedMessages)
            #expect(limits.maxQueuedBytes == example.queuedBytes)
            #expect(limits.timeToLive == .seconds(example.timeToLiveSeconds))
            #expect(limits.maxMessageLength == RelayLimits().maxMessageLength && limits.window == RelayLimits().window)
        } catch {
            #expect(error.setting == example.refused)
        }
    }

    @Test("The defaults are inside the bounds, so a relay started without options starts")
    func defaultsAccepted() throws {
        let limits = RelayLimits()
        for rate in [RateLimit.pushes, .posts] {
            #expect(RelaySettings.rateBurst.contains(rate.burst))
            #expect(RelaySettings.rateIntervalSeconds.contains(rate.interval / .seconds(1)))
        }
        #expect(RelaySettings.queuedMessages.contains(limits.maxQueuedMessages))
        #expect(RelaySettings.queuedBytes.contains(limits.maxQueuedBytes))
        #expect(RelaySettings.timeToLiveSeconds.contains(Int(limits.timeToLive.components.seconds)))
    }

    @Test("The error names the setting, the bounds and the value given")
    func message() {
        #expect(throws: RelaySettingError(setting: .postBurst, value: "0", allowed: "1...100000")) {
            try RelaySettings.rate(of: .posts, burst: 0, intervalSeconds: 3)
        }
        let error = RelaySettingError(setting: .queuedMessages, value: "0", allowed: "1...1000000")
        #expect(error.description == "the queued messages must be 1...1000000, not 0")
    }
}
