/// The client's Control Point line: the queue, the request in flight, and what a finished reply
/// turns into.
extension ANCSClient {
    /// Every entry point starts here: the action's hold ends with the call it was written in.
    mutating func begin() {
        heldForAction = false
    }

    /// Drops a request whose reply stalled past its deadline. Only `tick` judges deadlines: a
    /// driver that fell behind hands over input that waited in its queue, and the reply may be
    /// right behind the event it is handling; judged there, it would be dropped unread.
    mutating func expire(asOf instant: ContinuousClock.Instant, into actions: inout [Action]) {
        if let current = inFlight, instant >= current.deadline {
            fail("no data source reply within replyTimeout \(limits.replyTimeout)", into: &actions)
        }
    }

    /// Queues work; when the queue is full the oldest entry is dropped.
    mutating func enqueue(_ work: Work, into actions: inout [Action]) {
        guard limits.maxQueuedEvents > 0 else {
            actions.append(.refused("maxQueuedEvents is 0: dropped the request for notification \(work.uid)"))
            return
        }
        while queue.count >= limits.maxQueuedEvents {
            let dropped = queue.removeFirst()
            actions.append(.refused("queue full (maxQueuedEvents \(limits.maxQueuedEvents)): dropped the oldest request, for notification \(dropped.uid)"))
        }
        queue.append(work)
    }

    /// Writes queued requests while the line is free.
    mutating func pump(now: ContinuousClock.Instant, into actions: inout [Action]) {
        while inFlight == nil, !heldForAction, !queue.isEmpty {
            switch queue.removeFirst() {
            case .fetch(let fetch):
                let attributes = limits.notificationAttributes
                let parser = ANCSReplyParser(
                    command: .getNotificationAttributes, subject: .notification(uid: fetch.uid),
                    caps: Dictionary(uniqueKeysWithValues: attributes.map { ($0.id.rawValue, limits.cap($0.id)) }),
                    maxReplyBytes: limits.maxDataSourceReplyBytes
                )
                inFlight = InFlight(fetch: fetch, phase: .attributes, parser: parser, deadline: now + limits.replyTimeout)
                write(.notificationAttributes(uid: fetch.uid, attributes), into: &actions)
            case .perform(let uid, let action):
                write(.performAction(uid: uid, action), into: &actions)
                lastWriteWasAction = true
                heldForAction = true
            }
        }
    }

    private mutating func write(_ request: ANCSControlPointRequest, into actions: inout [Action]) {
        lastWriteWasAction = false
        actions.append(.writeControlPoint(request.bytes))
    }

    /// Drops the request in flight. A notification that only lacked its app's name goes out
    /// without one.
    mutating func fail(_ reason: String, into actions: inout [Action]) {
        guard let current = inFlight else { return }
        inFlight = nil
        actions.append(.refused(reason))
        if case .appName(let notification) = current.phase, !current.cancelled {
            report(notification, into: &actions)
        }
    }

    /// A reply is complete: report the notification, or first fetch its app's name.
    mutating func complete(_ finished: InFlight, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard !finished.cancelled else { return }
        let values = finished.parser.values
        switch finished.phase {
        case .attributes:
            var notification = notification(finished.fetch, values: values)
            if let cached = appNames[notification.appIdentifier] {
                notification.appName = cached.name
                report(notification, into: &actions)
            } else if notification.appIdentifier.isEmpty || notification.appIdentifier.utf8.contains(0) {
                report(notification, into: &actions)
            } else {
                let identifier = Array(notification.appIdentifier.utf8)
                let parser = ANCSReplyParser(
                    command: .getAppAttributes, subject: .app(identifier: identifier),
                    caps: [ANCSAppAttributeID.displayName.rawValue: .init(maxBytes: limits.maxOtherAttributeLength, truncates: false)],
                    maxReplyBytes: limits.maxDataSourceReplyBytes
                )
                inFlight = InFlight(fetch: finished.fetch, phase: .appName(notification), parser: parser, deadline: now + limits.replyTimeout)
                write(.appAttributes(appIdentifier: notification.appIdentifier, [.displayName]), into: &actions)
            }
        case .appName(var notification):
            let name = ANCSBytes.string(values[ANCSAppAttributeID.displayName.rawValue] ?? [], maxBytes: limits.maxOtherAttributeLength)
            if !name.isEmpty {
                remember(name, for: notification.appIdentifier)
                notification.appName = name
            }
            report(notification, into: &actions)
        }
    }

    private func notification(_ fetch: Fetch, values: [UInt8: [UInt8]]) -> ANCSNotification {
        func text(_ id: ANCSNotificationAttributeID) -> String {
            ANCSBytes.string(values[id.rawValue] ?? [], maxBytes: limits.cap(id).maxBytes)
        }
        func optional(_ id: ANCSNotificationAttributeID, if flag: ANCSEventFlags? = nil) -> String? {
            let value = text(id)
            return value.isEmpty || flag.map({ !fetch.flags.contains($0) }) == true ? nil : value
        }
        return ANCSNotification(
            uid: fetch.uid, flags: fetch.flags, category: fetch.category, appIdentifier: text(.appIdentifier),
            title: text(.title), subtitle: text(.subtitle), message: text(.message), date: optional(.date),
            positiveActionLabel: optional(.positiveActionLabel, if: .positiveAction),
            negativeActionLabel: optional(.negativeActionLabel, if: .negativeAction)
        )
    }

    /// Added the first time a UID is reported, modified after that.
    private mutating func report(_ notification: ANCSNotification, into actions: inout [Action]) {
        counter += 1
        if tracked[notification.uid] != nil {
            tracked[notification.uid]?.appIdentifier = notification.appIdentifier
            tracked[notification.uid]?.flags = notification.flags
            actions.append(.modified(notification))
            return
        }
        if tracked.count >= limits.maxTrackedNotifications, let oldest = tracked.min(by: { $0.value.order < $1.value.order }) {
            tracked.removeValue(forKey: oldest.key)
        }
        if limits.maxTrackedNotifications > 0 {
            tracked[notification.uid] = Tracked(appIdentifier: notification.appIdentifier, flags: notification.flags, order: counter)
        }
        actions.append(.added(notification))
    }

    private mutating func remember(_ name: String, for app: String) {
        guard limits.maxCachedAppNames > 0 else { return }
        counter += 1
        if appNames[app] == nil, appNames.count >= limits.maxCachedAppNames,
            let oldest = appNames.min(by: { $0.value.order < $1.value.order })
        {
            appNames.removeValue(forKey: oldest.key)
        }
        appNames[app] = (name, counter)
    }
}
