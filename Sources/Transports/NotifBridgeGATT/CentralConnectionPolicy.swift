/// When the transport extension's central connects, reconnects or gives up, with no IO: events
/// in (a message to send, the radio's state, a connection's outcome, the time), effects out.
/// Time comes in as `now`, so tests step a clock instead of waiting.
///
/// The rules, and why:
/// - The central is created on the first message, not when the session is accepted: created
///   too early it reports poweredOff (shinvou/NotifBridge, reference/apple-api.md §5.3).
/// - After the central is created, messages wait up to `radioGrace` for the radio to be on.
///   What it reports meanwhile is not final: created early, it has been seen to report powered
///   off or unsupported before it settles. Still not on by the grace's end, or off, unauthorized
///   or unsupported later, or an accessory the system does not know (not bonded through
///   AccessorySetupKit): `.unavailable`, so the system tries another transport instead of
///   retrying this one.
/// - A connection attempt that fails, or outlasts `connectTimeout`: `.failed`, and the next
///   attempt waits a backoff (1 s, doubling, at most `maxBackoff`) so an accessory out of range
///   is not hammered. A message during the backoff fails at once (`.failed`): the system
///   retries it, and holding it would only delay that.
/// - A link that drops is reconnected at once if messages wait, else on the next message.
public struct CentralConnectionPolicy<Instant: InstantProtocol<Duration> & Sendable>: Sendable {
    /// The radio as CoreBluetooth reports it (`CBManagerState`).
    public enum Radio: Sendable, Hashable {
        case unknown, resetting, unsupported, unauthorized, poweredOff, poweredOn
    }

    public enum Effect: Sendable, Hashable {
        /// Create the central manager (once).
        case createCentral
        /// Retrieve the accessory through the AccessorySetupKit session and connect to it.
        case connect
        /// Abandon the connection attempt.
        case cancelConnect
        /// Fail every waiting message with this outcome.
        case failWaiting(TransportOutcome)
        /// Call `tick` at this time (a deadline or a backoff's end).
        case wake(at: Instant)
    }

    /// What to do with a message that arrives now.
    public enum Admission: Sendable, Hashable {
        /// Queue it: it goes out once the link is open.
        case queue
        /// Complete it at once with this outcome.
        case reject(TransportOutcome)
    }

    private enum State: Sendable, Hashable {
        /// No central yet.
        case idle
        /// Central created; waiting for a usable radio state since then.
        case waitingForRadio(deadline: Instant)
        /// Radio on, not connected, not trying.
        case disconnected
        case connecting(deadline: Instant)
        case connected
        case backingOff(until: Instant)
        /// Radio unusable (off, unauthorized, unsupported) or accessory unknown.
        case unavailable
    }

    public var radioGrace = Duration.seconds(5)
    public var connectTimeout = Duration.seconds(10)
    public var firstBackoff = Duration.seconds(1)
    public var maxBackoff = Duration.seconds(30)

    private var state = State.idle
    private var failures = 0

    public init() {}

    public var isConnected: Bool { state == .connected }

    /// The backoff after `failures` consecutive failed attempts: 1 s, 2 s, 4 s, … `maxBackoff`.
    public func backoff(afterFailures failures: Int) -> Duration {
        var delay = firstBackoff
        for _ in 1..<max(failures, 1) {
            delay *= 2
            if delay >= maxBackoff { return maxBackoff }
        }
        return min(delay, maxBackoff)
    }

    /// A message to send arrived.
    public mutating func messageArrived(now: Instant) -> (Admission, [Effect]) {
        switch state {
        case .idle:
            let deadline = now.advanced(by: radioGrace)
            state = .waitingForRadio(deadline: deadline)
            return (.queue, [.createCentral, .wake(at: deadline)])
        case .waitingForRadio, .connecting, .connected:
            return (.queue, [])
        case .disconnected:
            return (.queue, startConnecting(now: now))
        case .backingOff(let until):
            if now < until { return (.reject(.failed), []) }
            return (.queue, startConnecting(now: now))
        case .unavailable:
            return (.reject(.unavailable), [])
        }
    }

    /// CoreBluetooth reported the radio's state (`centralManagerDidUpdateState`).
    public mutating func radioChanged(_ radio: Radio, now: Instant, waiting: Int) -> [Effect] {
        switch radio {
        case .unknown, .resetting:
            return []
        case .unsupported, .unauthorized, .poweredOff:
            // Within the grace, wait: the next report may be the real one.
            if case .waitingForRadio = state { return [] }
            let wasConnecting = if case .connecting = state { true } else { false }
            state = .unavailable
            return (wasConnecting ? [.cancelConnect] : []) + [.failWaiting(.unavailable)]
        case .poweredOn:
            switch state {
            case .idle, .connecting, .connected, .backingOff:
                return []
            case .waitingForRadio, .disconnected, .unavailable:
                state = .disconnected
                return waiting > 0 ? startConnecting(now: now) : []
            }
        }
    }

    /// The AccessorySetupKit session knows no such accessory, or CoreBluetooth cannot retrieve
    /// it: nothing to connect to until the person pairs again.
    public mutating func accessoryUnknown() -> [Effect] {
        state = .unavailable
        return [.failWaiting(.unavailable)]
    }

    public mutating func connected() {
        state = .connected
        failures = 0
    }

    /// A connection attempt failed (`didFailToConnect`).
    public mutating func connectFailed(now: Instant) -> [Effect] {
        guard case .connecting = state else { return [] }
        return backOff(now: now)
    }

    /// The link dropped (`didDisconnectPeripheral`).
    public mutating func disconnected(now: Instant, waiting: Int) -> [Effect] {
        switch state {
        case .connected:
            state = .disconnected
            return waiting > 0 ? startConnecting(now: now) : []
        case .connecting:
            return backOff(now: now)
        case .idle, .waitingForRadio, .disconnected, .backingOff, .unavailable:
            return []
        }
    }

    /// Time passed: a deadline or a backoff may have ended.
    public mutating func tick(now: Instant, waiting: Int) -> [Effect] {
        switch state {
        case .waitingForRadio(let deadline) where now >= deadline:
            state = .unavailable
            return [.failWaiting(.unavailable)]
        case .connecting(let deadline) where now >= deadline:
            return [.cancelConnect] + backOff(now: now)
        case .backingOff(let until) where now >= until:
            state = .disconnected
            return waiting > 0 ? startConnecting(now: now) : []
        default:
            return []
        }
    }

    private mutating func startConnecting(now: Instant) -> [Effect] {
        let deadline = now.advanced(by: connectTimeout)
        state = .connecting(deadline: deadline)
        return [.connect, .wake(at: deadline)]
    }

    private mutating func backOff(now: Instant) -> [Effect] {
        failures += 1
        let until = now.advanced(by: backoff(afterFailures: failures))
        state = .backingOff(until: until)
        return [.failWaiting(.failed), .wake(at: until)]
    }
}
