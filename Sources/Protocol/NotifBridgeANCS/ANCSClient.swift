/// The accessory's ANCS client (the specification's Notification Consumer): a pure state machine.
/// The driver hands it what the three characteristics deliver and the time, and carries out the
/// actions it returns, in order.
///
/// Data Source replies carry no request id and no total length, so Control Point requests that
/// expect one are serialised: one awaits its reply, the rest queue (docs/ANCS.md).
public struct ANCSClient: Sendable {
    public enum Action: Equatable, Sendable {
        case writeControlPoint([UInt8])
        /// Attributes (and the app's display name, fetched once per app) are complete.
        case added(ANCSNotification)
        case modified(ANCSNotification)
        /// Only for UIDs reported as added; others are ignored.
        case removed(uid: UInt32, appIdentifier: String)
        /// Malformed input or a dropped request, for logs. Never notification content.
        case refused(String)
    }

    /// A notification to fetch, with what its latest Notification Source event said.
    struct Fetch: Sendable {
        var uid: UInt32
        var flags: ANCSEventFlags
        var category: ANCSCategory
    }

    enum Work: Sendable {
        case fetch(Fetch)
        case perform(uid: UInt32, ANCSActionID)

        var uid: UInt32 {
            switch self {
            case .fetch(let fetch): fetch.uid
            case .perform(let uid, _): uid
            }
        }
    }

    /// The request awaiting its Data Source reply.
    struct InFlight: Sendable {
        enum Phase: Sendable {
            case attributes
            /// The attributes are in; the app's display name is being fetched.
            case appName(ANCSNotification)
        }

        var fetch: Fetch
        var phase: Phase
        var parser: ANCSReplyParser
        var deadline: ContinuousClock.Instant
        /// Removed on the phone meanwhile: the reply is still read, so the stream stays in step,
        /// then discarded.
        var cancelled = false
    }

    struct Tracked: Sendable {
        var appIdentifier: String
        var flags: ANCSEventFlags
        var order: UInt64
    }

    public let limits: Limits
    var queue: [Work] = []
    var inFlight: InFlight?
    /// A PerformNotificationAction was just written. It expects no reply, but the next write waits
    /// for the next call, so that a failure the driver reports is known to be the action's.
    var heldForAction = false
    var lastWriteWasAction = false
    var tracked: [UInt32: Tracked] = [:]
    var appNames: [String: (name: String, order: UInt64)] = [:]
    var counter: UInt64 = 0

    public init(limits: Limits = .init()) {
        self.limits = limits
    }

    /// Requests queued or awaiting a reply.
    public var pendingCount: Int { queue.count + (inFlight == nil ? 0 : 1) }
    /// Notifications reported and not removed (bounded by `maxTrackedNotifications`).
    public var trackedCount: Int { tracked.count }
    public var cachedAppNameCount: Int { appNames.count }

    public mutating func receivedNotificationSource(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        begin()
        var actions: [Action] = []
        do {
            let event = try ANCSNotificationSourceEvent(bytes: bytes)
            switch event.eventID {
            case .added, .modified:
                tracked[event.uid]?.flags = event.flags
                let fetch = Fetch(uid: event.uid, flags: event.flags, category: event.category)
                if let index = queue.firstIndex(where: { if case .fetch(let queued) = $0 { queued.uid == event.uid } else { false } }) {
                    queue[index] = .fetch(fetch)
                } else {
                    enqueue(.fetch(fetch), into: &actions)
                }
            case .removed:
                queue.removeAll { $0.uid == event.uid }
                if inFlight?.fetch.uid == event.uid { inFlight?.cancelled = true }
                if let gone = tracked.removeValue(forKey: event.uid) {
                    actions.append(.removed(uid: event.uid, appIdentifier: gone.appIdentifier))
                }
            }
        } catch {
            actions.append(.refused("notification source: \(error)"))
        }
        pump(now: now, into: &actions)
        return actions
    }

    public mutating func receivedDataSource(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        begin()
        var actions: [Action] = []
        guard var current = inFlight else {
            actions.append(.refused("\(bytes.count) data source bytes with no request awaiting a reply"))
            pump(now: now, into: &actions)
            return actions
        }
        do {
            let read = try current.parser.feed(bytes[...])
            current.deadline = now + limits.replyTimeout
            inFlight = current
            if current.parser.isComplete {
                inFlight = nil
                complete(current, now: now, into: &actions)
            }
            if read < bytes.count {
                actions.append(.refused("\(bytes.count - read) data source bytes after the end of the reply"))
            }
        } catch {
            fail("data source: \(error)", into: &actions)
        }
        pump(now: now, into: &actions)
        return actions
    }

    public mutating func controlPointWriteFailed(_ detail: String, now: ContinuousClock.Instant) -> [Action] {
        begin()
        var actions: [Action] = []
        if lastWriteWasAction {
            lastWriteWasAction = false
            actions.append(.refused("perform notification action failed: \(detail)"))
        } else if inFlight != nil {
            fail("control point write failed: \(detail)", into: &actions)
        } else {
            actions.append(.refused("control point write failed with no request in flight: \(detail)"))
        }
        pump(now: now, into: &actions)
        return actions
    }

    /// Drops a request whose reply was overdue as of `made` (when the driver's tick was made,
    /// which a driver that fell behind hands over late; see `expire`), then writes what waits,
    /// with deadlines counted from `now`.
    public mutating func tick(now: ContinuousClock.Instant, made: ContinuousClock.Instant? = nil) -> [Action] {
        begin()
        var actions: [Action] = []
        expire(asOf: min(made ?? now, now), into: &actions)
        pump(now: now, into: &actions)
        return actions
    }

    public mutating func perform(_ action: ANCSActionID, uid: UInt32, now: ContinuousClock.Instant) -> [Action] {
        begin()
        var actions: [Action] = []
        if let known = tracked[uid] {
            if known.flags.contains(action.flag) {
                enqueue(.perform(uid: uid, action), into: &actions)
            } else {
                actions.append(.refused("notification \(uid) offers no \(action) action"))
            }
        } else {
            actions.append(.refused("perform \(action) on unknown notification \(uid)"))
        }
        pump(now: now, into: &actions)
        return actions
    }
}
