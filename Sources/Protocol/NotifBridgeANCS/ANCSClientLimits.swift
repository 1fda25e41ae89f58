extension ANCSClient {
    /// Every bound the client keeps, so a phone (or anything posing as one) cannot make it hold
    /// more than these whatever it sends.
    public struct Limits: Sendable, Hashable {
        /// Maximum lengths asked for in GetNotificationAttributes, in UTF-8 bytes. A phone that
        /// sends more is cut to them (at a character boundary).
        public var maxTitleLength: UInt16
        public var maxSubtitleLength: UInt16
        public var maxMessageLength: UInt16
        /// Attributes ANCS gives no way to bound in the request: AppIdentifier, Date, the action
        /// labels and the app's display name. A longer one fails the reply.
        public var maxOtherAttributeLength: Int
        /// Requests waiting for the Control Point (one per Notification Source event that needs
        /// a fetch, and per action); when full, the oldest is dropped.
        public var maxQueuedEvents: Int
        /// Notifications reported (UID → app id), so removals and actions can be matched; when
        /// full, the oldest is forgotten and its removal will be ignored.
        public var maxTrackedNotifications: Int
        /// App display names kept, so each app's name is fetched once; when full, the oldest goes.
        public var maxCachedAppNames: Int
        /// A request whose reply shows no progress for this long is dropped.
        public var replyTimeout: Duration
        /// Largest Data Source reply, all its attributes together, before the reply is refused.
        public var maxDataSourceReplyBytes: Int

        public init(
            maxTitleLength: UInt16 = 256,
            maxSubtitleLength: UInt16 = 256,
            maxMessageLength: UInt16 = 1024,
            maxOtherAttributeLength: Int = 255,
            maxQueuedEvents: Int = 64,
            maxTrackedNotifications: Int = 256,
            maxCachedAppNames: Int = 64,
            replyTimeout: Duration = .seconds(5),
            maxDataSourceReplyBytes: Int = 4096
        ) {
            self.maxTitleLength = maxTitleLength
            self.maxSubtitleLength = maxSubtitleLength
            self.maxMessageLength = maxMessageLength
            self.maxOtherAttributeLength = maxOtherAttributeLength
            self.maxQueuedEvents = maxQueuedEvents
            self.maxTrackedNotifications = maxTrackedNotifications
            self.maxCachedAppNames = maxCachedAppNames
            self.replyTimeout = replyTimeout
            self.maxDataSourceReplyBytes = maxDataSourceReplyBytes
        }

        /// What the client asks for about each notification.
        public var notificationAttributes: [ANCSNotificationAttributeRequest] {
            [
                .appIdentifier, .title(maxLength: maxTitleLength), .subtitle(maxLength: maxSubtitleLength),
                .message(maxLength: maxMessageLength), .date, .positiveActionLabel, .negativeActionLabel,
            ]
        }

        /// The most a reply may carry of each attribute.
        func cap(_ id: ANCSNotificationAttributeID) -> ANCSReplyParser.Cap {
            switch id {
            case .title: .init(maxBytes: Int(maxTitleLength), truncates: true)
            case .subtitle: .init(maxBytes: Int(maxSubtitleLength), truncates: true)
            case .message: .init(maxBytes: Int(maxMessageLength), truncates: true)
            default: .init(maxBytes: maxOtherAttributeLength, truncates: false)
            }
        }
    }
}
