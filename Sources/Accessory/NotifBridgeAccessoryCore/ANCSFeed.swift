import Foundation
import NotifBridgeANCS
import NotifBridgeWire

/// One iPhone's ANCS service as a source of host events, with no IO: the ANCS client's
/// output numbered into ``HostEvent``s for the same pipeline AccessoryNotifications uses, the
/// catch-up after a connection, and the rule that AccessoryNotifications wins.
///
/// - One iPhone at a time: events from any other device are ignored until the first goes.
/// - Each connection is its own epoch (`exchangeID`, allocated by the store), numbered from 1,
///   so a notification the iPhone announces again after a reconnect orders after what is stored.
/// - Catch-up: ANCS marks pre-existing notifications but not the last one. Catch-up ends when
///   a new (not pre-existing) notification arrives, or when none has been announced for
///   `catchUpQuiet` and every fetch is done; stored ANCS notifications the iPhone did not
///   announce again are then withdrawn (removed on the iPhone while the accessory was away).
/// - AccessoryNotifications wins: while an AccessoryNotifications session is established, ANCS
///   is stored nowhere and its notifications are withdrawn, so one notification never shows
///   twice; the richer source (replies with text, attachments) is the one kept.
public struct ANCSFeed: Sendable {
    public struct Configuration: Sendable {
        public var client: ANCSClient.Limits
        /// Quiet after the last pre-existing announcement before catch-up is taken as complete.
        public var catchUpQuiet: Duration
        /// The iPhone's time zone, for ANCS dates (they carry none).
        public var timeZone: TimeZone

        public init(client: ANCSClient.Limits = .init(), catchUpQuiet: Duration = .seconds(3), timeZone: TimeZone = .current) {
            self.client = client
            self.catchUpQuiet = catchUpQuiet
            self.timeZone = timeZone
        }
    }

    public enum Action: Equatable, Sendable {
        case writeControlPoint(device: String, [UInt8])
        /// Events to store, in order, under `exchangeID`.
        case deliver([HostEvent], exchangeID: UInt64)
        /// Stored, live ANCS notifications whose identifiers are not in the set are gone.
        case withdraw(keeping: Set<String>)
        /// For the log; never notification content.
        case log(String)
    }

    private struct Connection: Sendable {
        var device: String
        var exchangeID: UInt64
        var client: ANCSClient
        var sequence: UInt64 = 0
        var catchUp: CatchUp?
    }

    private struct CatchUp: Sendable {
        var announced: Set<String> = []
        /// More were announced than `maxCatchUpIdentifiers`: nothing is withdrawn.
        var overflowed = false
        var lastAnnouncement: ContinuousClock.Instant
    }

    /// Identifiers remembered during one catch-up. An iPhone announcing more (a hostile one
    /// could announce without end) cannot grow memory: past this the feed withdraws nothing.
    public static let maxCatchUpIdentifiers = 4096

    public let configuration: Configuration
    private var connection: Connection?
    /// An AccessoryNotifications session is established: ANCS is set aside.
    public private(set) var yielding = false

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// The device being served, if any.
    public var device: String? { connection?.device }

    /// Whether catch-up after the connection is still under way.
    public var catchingUp: Bool { connection?.catchUp != nil }

    /// `device` subscribed; `exchangeID` is the epoch the store allocated for this connection.
    public mutating func connected(_ device: String, exchangeID: UInt64, now: ContinuousClock.Instant) -> [Action] {
        if let current = connection?.device {
            return current == device ? [] : [.log("ignoring ANCS from \(device): serving \(current), one iPhone at a time")]
        }
        connection = Connection(device: device, exchangeID: exchangeID, client: ANCSClient(limits: configuration.client), catchUp: CatchUp(lastAnnouncement: now))
        return [.log("ANCS connected: \(device)")]
    }

    public mutating func disconnected(_ device: String) -> [Action] {
        guard connection?.device == device else { return [] }
        connection = nil
        return [.log("ANCS disconnected: \(device)")]
    }

    public mutating func receivedNotificationSource(_ bytes: [UInt8], from device: String, now: ContinuousClock.Instant, date: Date) -> [Action] {
        guard var current = connection, current.device == device else { return [] }
        // Whatever the iPhone names during catch-up, new or not, it still has.
        if var catchUp = current.catchUp, let event = try? ANCSNotificationSourceEvent(bytes: bytes), event.eventID != .removed {
            let identifier = ANCSMapping.notificationIdentifier(uid: event.uid)
            if catchUp.announced.count < Self.maxCatchUpIdentifiers || catchUp.announced.contains(identifier) {
                catchUp.announced.insert(identifier)
            } else {
                catchUp.overflowed = true
            }
            if event.flags.contains(.preExisting) { catchUp.lastAnnouncement = now }
            current.catchUp = catchUp
        }
        let actions = current.client.receivedNotificationSource(bytes, now: now)
        connection = current
        return handle(actions, now: now, date: date)
    }

    public mutating func receivedDataSource(_ bytes: [UInt8], from device: String, now: ContinuousClock.Instant, date: Date) -> [Action] {
        guard connection?.device == device else { return [] }
        let actions = connection!.client.receivedDataSource(bytes, now: now)
        return handle(actions, now: now, date: date)
    }

    public mutating func controlPointWriteFailed(_ detail: String, device: String, now: ContinuousClock.Instant, date: Date) -> [Action] {
        guard connection?.device == device else { return [] }
        let actions = connection!.client.controlPointWriteFailed(detail, now: now)
        return handle(actions, now: now, date: date)
    }

    /// Once a second or so: reply timeouts, the end of catch-up, and whether an
    /// AccessoryNotifications session (`otherSourceEstablished`) has taken over or let go.
    /// Timeouts and quiet are judged as of `made`, when the driver made the tick: one handed
    /// over late, behind a reply that arrived in time, must not drop that reply.
    public mutating func tick(now: ContinuousClock.Instant, made: ContinuousClock.Instant? = nil, date: Date, otherSourceEstablished: Bool) -> [Action] {
        let made = min(made ?? now, now)
        var out: [Action] = []
        if otherSourceEstablished != yielding {
            yielding = otherSourceEstablished
            if yielding {
                out.append(.log("an AccessoryNotifications session is established: ANCS notifications are set aside"))
                out.append(.withdraw(keeping: []))
            } else {
                out.append(.log("the AccessoryNotifications session ended: ANCS notifications are stored again"))
            }
        }
        guard connection != nil else { return out }
        out += handle(connection!.client.tick(now: now, made: made), now: now, date: date)
        if let catchUp = connection?.catchUp, connection!.client.pendingCount == 0, made - catchUp.lastAnnouncement >= configuration.catchUpQuiet {
            out += endCatchUp()
        }
        return out
    }

    /// Asks the iPhone to perform a notification's positive or negative action.
    public mutating func perform(_ action: ANCSActionID, identifier: String, now: ContinuousClock.Instant, date: Date) -> Result<[Action], ANCSFeedError> {
        guard connection != nil else { return .failure(.notConnected) }
        guard let uid = ANCSMapping.uid(forNotificationIdentifier: identifier) else { return .failure(.notANCS(identifier)) }
        let actions = connection!.client.perform(action, uid: uid, now: now)
        if let refusal = actions.lazy.compactMap({ if case .refused(let why) = $0 { why } else { nil } }).first {
            return .failure(.refused(refusal))
        }
        return .success(handle(actions, now: now, date: date))
    }

    private mutating func endCatchUp() -> [Action] {
        guard let catchUp = connection?.catchUp else { return [] }
        connection?.catchUp = nil
        let count = catchUp.announced.count
        var out: [Action] = [.log("ANCS catch-up complete: \(count) notification\(count == 1 ? "" : "s") named")]
        if catchUp.overflowed {
            out.append(.log("ANCS catch-up named more than \(Self.maxCatchUpIdentifiers) notifications; none withdrawn"))
        } else if !yielding {
            out.append(.withdraw(keeping: catchUp.announced))
        }
        return out
    }

    /// Numbers the client's notifications into host events (none while yielding) and passes
    /// its Control Point writes on.
    private mutating func handle(_ actions: [ANCSClient.Action], now: ContinuousClock.Instant, date: Date) -> [Action] {
        guard var current = connection else { return [] }
        var out: [Action] = []
        var events: [HostEvent] = []
        var endsCatchUp = false
        for action in actions {
            switch action {
            case .writeControlPoint(let bytes):
                out.append(.writeControlPoint(device: current.device, bytes))
            case .refused(let reason):
                out.append(.log("ANCS: \(reason)"))
            case .added(let notification) where !notification.flags.contains(.preExisting):
                endsCatchUp = current.catchUp != nil
                fallthrough
            case .added, .modified, .removed:
                guard !yielding else { continue }
                current.sequence += 1
                if let event = ANCSMapping.event(for: action, sequence: current.sequence, receivedAt: date, timeZone: configuration.timeZone) {
                    events.append(event)
                } else {
                    current.sequence -= 1
                }
            }
        }
        connection = current
        if !events.isEmpty { out.append(.deliver(events, exchangeID: current.exchangeID)) }
        if endsCatchUp { out += endCatchUp() }
        return out
    }
}

public enum ANCSFeedError: Error, Equatable, Sendable, CustomStringConvertible {
    case notConnected
    case notANCS(String)
    case refused(String)

    public var description: String {
        switch self {
        case .notConnected: "no iPhone is connected over ANCS; nothing was sent"
        case .notANCS(let id): "\(id) did not come through ANCS"
        case .refused(let reason): reason
        }
    }
}
