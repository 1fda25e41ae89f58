import Foundation
import NotifBridgeWire

/// The iPhone-side model of a notification, shaped like `AccessoryNotification` and
/// `AlertingContext` (apple-api §3–4). It is also the JSON the simulated iPhone reads.
public struct HostNotification: Codable, Sendable, Hashable {
    public var source: String
    public var id: String
    public var sourceName: String
    public var title: String?
    public var subtitle: String?
    public var body: String?
    /// The body as runs when it holds image glyphs (genmoji); overrides `body`.
    public var bodyRuns: [TextRunInput]?
    public var summary: String?
    public var thread: String?
    public var deliveryDate: Date?
    public var displayDate: DisplayDateInput?
    public var attributes: [AttributeInput]?
    public var actions: [ActionInput]?
    public var sourceIcon: FileInput?
    public var contextIcon: FileInput?
    public var attachments: [FileInput]?

    public init(source: String, id: String, sourceName: String, title: String? = nil, subtitle: String? = nil, body: String? = nil, thread: String? = nil) {
        self.source = source
        self.id = id
        self.sourceName = sourceName
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.thread = thread
    }

    public struct TextRunInput: Codable, Sendable, Hashable {
        public var text: String?
        public var glyph: GlyphInput?
        public init(text: String?, glyph: GlyphInput?) {
            self.text = text
            self.glyph = glyph
        }
    }

    public struct GlyphInput: Codable, Sendable, Hashable {
        public var id: String
        public var description: String
        public var image: FileInput?
        public init(id: String, description: String, image: FileInput?) {
            self.id = id
            self.description = description
            self.image = image
        }
    }

    public struct DisplayDateInput: Codable, Sendable, Hashable {
        public enum Kind: String, Codable, Sendable { case delivery, content, allDay, hide }
        public var kind: Kind
        public var date: Date?
        public init(kind: Kind, date: Date?) {
            self.kind = kind
            self.date = date
        }
    }

    public enum AttributeInput: String, Codable, Sendable { case timeSensitive, critical, priority }

    public struct ActionInput: Codable, Sendable, Hashable {
        public enum Kind: String, Codable, Sendable { case dismiss, background, textInput }
        public var id: String
        public var title: String?
        public var type: Kind
        public var placeholder: String?
        public init(id: String, title: String?, type: Kind, placeholder: String? = nil) {
            self.id = id
            self.title = title
            self.type = type
            self.placeholder = placeholder
        }
    }

    /// A file as the data provider would read it from `AccessoryNotification.File.url`.
    public struct FileInput: Codable, Sendable, Hashable {
        public var type: String
        public var base64: String
        public init(type: String, base64: String) {
            self.type = type
            self.base64 = base64
        }
    }
}

/// `AlertingContext`, as the iOS system computes it for the accessory.
public struct HostAlerting: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable { case notification, incomingCall, timer, activeCall }
    public var shouldAlert: Bool
    public var canAlert: Bool
    public var suppressedByFocus: Bool
    public var kind: Kind
    /// nil: the notification has no sound.
    public var sound: Sound?

    public struct Sound: Codable, Sendable, Hashable {
        public var ignoreSilentMode: Bool
        public init(ignoreSilentMode: Bool) { self.ignoreSilentMode = ignoreSilentMode }
    }

    public init(shouldAlert: Bool = true, canAlert: Bool = true, suppressedByFocus: Bool = false, kind: Kind = .notification, sound: Sound? = Sound(ignoreSilentMode: false)) {
        self.shouldAlert = shouldAlert
        self.canAlert = canAlert
        self.suppressedByFocus = suppressedByFocus
        self.kind = kind
        self.sound = sound
    }

    public static let standard = HostAlerting()
}

/// One step the iOS system asks the data provider to forward.
public enum HostOperation: Codable, Sendable, Hashable {
    case add(HostNotification, HostAlerting)
    case update(HostNotification)
    case remove(source: String, id: String)
    case removeAll

    private enum CodingKeys: String, CodingKey { case op, notification, alerting, source, id }

    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "add":
            self = .add(
                try container.decode(HostNotification.self, forKey: .notification),
                try container.decodeIfPresent(HostAlerting.self, forKey: .alerting) ?? .standard
            )
        case "update":
            self = .update(try container.decode(HostNotification.self, forKey: .notification))
        case "remove":
            self = .remove(source: try container.decode(String.self, forKey: .source), id: try container.decode(String.self, forKey: .id))
        case "removeAll":
            self = .removeAll
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "op must be add, update, remove or removeAll, not \"\(op)\"")
        }
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .add(let notification, let alerting):
            try container.encode("add", forKey: .op)
            try container.encode(notification, forKey: .notification)
            try container.encode(alerting, forKey: .alerting)
        case .update(let notification):
            try container.encode("update", forKey: .op)
            try container.encode(notification, forKey: .notification)
        case .remove(let source, let id):
            try container.encode("remove", forKey: .op)
            try container.encode(source, forKey: .source)
            try container.encode(id, forKey: .id)
        case .removeAll:
            try container.encode("removeAll", forKey: .op)
        }
    }
}

/// Identifiers the simulated iPhone uses, as iOS would assign them at pairing.
public enum SimulatorIdentity {
    /// The accessory's Bluetooth identifier (iOS's CBPeripheral UUID for it), sent in KeyMaterial.
    public static let accessoryIdentifier = "7A0C2B64-2F1D-4E55-9A6B-3C8D1E0F4A21"
    /// The notification feature's transport session UUID: the HPKE feature ID.
    public static let sessionID = UUID(uuidString: "C3E1A5D2-8B47-4F09-B6A1-5D2E7F8C9B30")!
    /// `sessionID` as the string that goes into the HPKE export context.
    public static var featureID: String { sessionID.uuidString }
}

extension HostOperation {
    /// "add com.apple.MobileSMS/msg-1": what the operation is about, without its content.
    public var summaryLine: String {
        switch self {
        case .add(let n, _): "add \(n.source)/\(n.id)"
        case .update(let n): "update \(n.source)/\(n.id)"
        case .remove(let source, let id): "remove \(source)/\(id)"
        case .removeAll: "remove-all"
        }
    }
}
