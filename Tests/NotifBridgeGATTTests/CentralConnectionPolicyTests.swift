import NotifBridgeGATT
import Testing

/// When the central connects and how messages complete, on a stepped clock.
@Suite("Central connection policy")
struct CentralConnectionPolicyTests {
    typealias Policy = CentralConnectionPolicy<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { t0.advanced(by: .milliseconds(Int(seconds * 1000))) }

    @Test("The central is created on the first message, not before")
    func lazyCentral() {
        var policy = Policy()
        let (admission, effects) = policy.messageArrived(now: t0)
        #expect(admission == .queue)
        #expect(effects == [.createCentral, .wake(at: at(5))])
        let (_, again) = policy.messageArrived(now: at(1))
        #expect(again.isEmpty, "created once")
    }

    @Test("Radio states once settled: on connects, off / unauthorized / unsupported make the transport unavailable", arguments: [
        (Policy.Radio.poweredOn, [Policy.Effect]([])),
        (.poweredOff, [.cancelConnect, .failWaiting(.unavailable)]),
        (.unauthorized, [.cancelConnect, .failWaiting(.unavailable)]),
        (.unsupported, [.cancelConnect, .failWaiting(.unavailable)]),
        (.unknown, []),
        (.resetting, []),
    ])
    func radioStates(radio: Policy.Radio, expected: [Policy.Effect]) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        #expect(policy.radioChanged(.poweredOn, now: at(1), waiting: 1) == [.connect, .wake(at: at(11))])
        #expect(policy.radioChanged(radio, now: at(2), waiting: 1) == expected)
    }

    @Test("Within the grace a central created early may report off or unsupported first; only the state at the grace's end counts", arguments: [
        Policy.Radio.poweredOff, .unsupported, .unauthorized,
    ])
    func earlyReports(radio: Policy.Radio) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        #expect(policy.radioChanged(radio, now: at(0.1), waiting: 1).isEmpty)
        #expect(policy.radioChanged(.poweredOn, now: at(0.5), waiting: 1) == [.connect, .wake(at: at(10.5))])

        var off = Policy()
        _ = off.messageArrived(now: t0)
        #expect(off.radioChanged(radio, now: at(0.1), waiting: 1).isEmpty)
        #expect(off.tick(now: at(5), waiting: 1) == [.failWaiting(.unavailable)])
    }

    @Test("No radio state within the grace: unavailable at 5 s, not a moment before", arguments: [(4.999, false), (5.0, true)])
    func radioGrace(seconds: Double, expired: Bool) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        let effects = policy.tick(now: at(seconds), waiting: 1)
        #expect(effects == (expired ? [.failWaiting(.unavailable)] : []))
        let (admission, _) = policy.messageArrived(now: at(seconds))
        #expect(admission == (expired ? .reject(.unavailable) : .queue))
    }

    @Test("A connection attempt times out at 10 s: the waiting messages fail and a backoff starts", arguments: [(9.999, false), (10.0, true)])
    func connectTimeout(seconds: Double, expired: Bool) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        #expect(policy.radioChanged(.poweredOn, now: t0, waiting: 1) == [.connect, .wake(at: at(10))])
        let effects = policy.tick(now: at(seconds), waiting: 1)
        #expect(effects == (expired ? [.cancelConnect, .failWaiting(.failed), .wake(at: at(seconds + 1))] : []))
    }

    @Test("Backoff after consecutive failures: 1 s doubling up to 30 s", arguments: [
        (1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 30), (7, 30), (50, 30),
    ])
    func backoffTable(failures: Int, seconds: Int) {
        #expect(Policy().backoff(afterFailures: failures) == .seconds(seconds))
    }

    @Test("A message during the backoff fails at once; at its end the next one connects", arguments: [(1.999, false), (2.0, true)])
    func duringBackoff(seconds: Double, over: Bool) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        _ = policy.radioChanged(.poweredOn, now: t0, waiting: 1)
        #expect(policy.connectFailed(now: at(1)) == [.failWaiting(.failed), .wake(at: at(2))])
        let (admission, effects) = policy.messageArrived(now: at(seconds))
        #expect(admission == (over ? .queue : .reject(.failed)))
        #expect(effects == (over ? [.connect, .wake(at: at(seconds + 10))] : []))
    }

    @Test("Failures double the backoff; a connection resets it")
    func backoffResets() {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        _ = policy.radioChanged(.poweredOn, now: t0, waiting: 1)
        _ = policy.connectFailed(now: at(0))
        _ = policy.tick(now: at(1), waiting: 1)
        #expect(policy.connectFailed(now: at(1)) == [.failWaiting(.failed), .wake(at: at(3))], "second failure: 2 s")
        _ = policy.tick(now: at(3), waiting: 1)
        policy.connected()
        #expect(policy.isConnected)
        _ = policy.disconnected(now: at(4), waiting: 1)
        #expect(policy.connectFailed(now: at(5)) == [.failWaiting(.failed), .wake(at: at(6))], "counted afresh: 1 s")
    }

    @Test("A dropped link reconnects at once when messages wait, else on the next message", arguments: [(1, true), (0, false)])
    func reconnect(waiting: Int, atOnce: Bool) {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        _ = policy.radioChanged(.poweredOn, now: t0, waiting: 1)
        policy.connected()
        let effects = policy.disconnected(now: at(2), waiting: waiting)
        #expect(effects == (atOnce ? [.connect, .wake(at: at(12))] : []))
        if !atOnce {
            #expect(policy.messageArrived(now: at(3)).1 == [.connect, .wake(at: at(13))])
        }
    }

    @Test("An accessory the system does not know: unavailable until the radio comes back on")
    func unknownAccessory() {
        var policy = Policy()
        _ = policy.messageArrived(now: t0)
        #expect(policy.accessoryUnknown() == [.failWaiting(.unavailable)])
        #expect(policy.messageArrived(now: at(1)).0 == .reject(.unavailable))
        #expect(policy.radioChanged(.poweredOn, now: at(2), waiting: 0).isEmpty)
        #expect(policy.messageArrived(now: at(3)).0 == .queue)
    }
}
