import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeStore
import NotifBridgeWire

/// The list page's query: which app, and what text, both optional.
struct ListQuery: Sendable, Equatable {
    var app: String?
    var text: String?

    /// The longest search text and app identifier taken from a URL.
    static let maxTextLength = 200
    static let maxAppLength = 255

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    init(app: String? = nil, text: String? = nil) throws(Invalid) {
        let app = app?.trimmingCharacters(in: .whitespaces)
        let text = text?.trimmingCharacters(in: .whitespaces)
        if let app, app.utf8.count > Self.maxAppLength {
            throw Invalid(description: "the app filter is at most \(Self.maxAppLength) bytes; this one is \(app.utf8.count)")
        }
        if let text, text.utf8.count > Self.maxTextLength {
            throw Invalid(description: "the search text is at most \(Self.maxTextLength) bytes; this one is \(text.utf8.count)")
        }
        self.app = app?.isEmpty == false ? app : nil
        self.text = text?.isEmpty == false ? text?.lowercased() : nil
    }

    func matches(_ view: NotificationView) -> Bool {
        (app == nil || view.source == app) && (text.map { view.searchText.contains($0) } ?? true)
    }
}

/// One pass over the store for the list page: the newest matching notifications, every app with
/// its count, and notifications and alerts per hour over the last day. Reads a page of records at
/// a time and keeps at most `maxListed` views, so memory stays bounded whatever is stored.
struct Listing: Sendable {
    struct App: Sendable {
        let source: String
        let name: String
        let count: Int
        let selected: Bool
    }

    struct Hour: Sendable {
        let label: String
        let notifications: Int
        let alerts: Int
    }

    var items: [NotificationView] = []
    var apps: [App] = []
    var hours: [Hour] = []
    /// More matched than the page shows.
    var truncated = false
    /// Stored rows that could not be read back (a bad sector, a hand edit): said on the page, so
    /// that a missing notification is not a mystery.
    var damaged = 0
    var scanned = 0

    static let maxListed = 200
    static let pageSize = 100

    /// - Parameter items: false reads only the counts (the chart), decoding no notification for the list.
    static func read(_ store: AccessoryStore, query: ListQuery, items: Bool = true, now: Date, calendar: Calendar = .current) throws -> Listing {
        var listing = Listing()
        var appCounts: [String: (name: String, count: Int)] = [:]
        let hourStart = calendar.dateInterval(of: .hour, for: now)?.start ?? now
        let firstHour = hourStart.addingTimeInterval(-23 * 3600)
        var perHour = Array(repeating: (0, 0), count: 24)
        var cursor: NotificationCursor?
        repeat {
            let page = try store.notificationPage(after: cursor, limit: pageSize, includeRemoved: true)
            listing.damaged += page.damaged.count
            for record in page.records {
                listing.scanned += 1
                if record.alertDecision != nil, record.receivedAt >= firstHour {
                    let bucket = min(23, Int(record.receivedAt.timeIntervalSince(firstHour) / 3600))
                    perHour[bucket].0 += 1
                    if record.alerted { perHour[bucket].1 += 1 }
                }
                guard !record.removed, items else { continue }
                let name = record.notification.sourceName.isEmpty ? record.sourceIdentifier : record.notification.sourceName
                appCounts[record.sourceIdentifier, default: (name, 0)].count += 1
                guard query.app == nil || query.app == record.sourceIdentifier else { continue }
                let view = NotificationView(record)
                guard query.matches(view) else { continue }
                if listing.items.count < maxListed { listing.items.append(view) } else { listing.truncated = true }
            }
            cursor = page.next
        } while cursor != nil
        listing.apps = appCounts.map { App(source: $0.key, name: $0.value.name, count: $0.value.count, selected: $0.key == query.app) }
            .sorted { ($0.name.lowercased(), $0.source) < ($1.name.lowercased(), $1.source) }
        listing.hours = perHour.enumerated().map { index, counts in
            let start = firstHour.addingTimeInterval(Double(index) * 3600)
            return Hour(label: start.formatted(.dateTime.hour()), notifications: counts.0, alerts: counts.1)
        }
        return listing
    }
}

/// The per-hour chart as SVG geometry: bar heights are attributes, not styles, so the page's
/// content security policy needs no inline styles.
struct ChartView: Sendable {
    struct Bar: Sendable {
        let x: Int
        let notificationsY: Int
        let notificationsHeight: Int
        let alertsY: Int
        let alertsHeight: Int
        let title: String
    }

    let bars: [Bar]
    let maximum: Int
    let total: Int
    let alerts: Int
    static let height = 80
    static let barWidth = 14
    static let width = 24 * (barWidth + 2)

    init(_ hours: [Listing.Hour]) {
        maximum = max(1, hours.map(\.notifications).max() ?? 0)
        total = hours.reduce(0) { $0 + $1.notifications }
        alerts = hours.reduce(0) { $0 + $1.alerts }
        let scale = Double(Self.height) / Double(maximum)
        bars = hours.enumerated().map { index, hour in
            let notifications = Int((Double(hour.notifications) * scale).rounded(.up))
            let alerts = Int((Double(hour.alerts) * scale).rounded(.up))
            return Bar(
                x: index * (Self.barWidth + 2),
                notificationsY: Self.height - notifications, notificationsHeight: notifications,
                alertsY: Self.height - alerts, alertsHeight: alerts,
                title: "\(hour.label): \(hour.notifications) notification\(hour.notifications == 1 ? "" : "s"), \(hour.alerts) alerted"
            )
        }
    }
}
