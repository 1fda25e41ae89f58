import Foundation

/// Which of an accessory's two tokens a request carries.
public enum RelayRole: String, Sendable {
    /// The accessory, reading its inbox.
    case inbox
    /// The companion app, posting to the accessory.
    case post
}

/// No accessory of this ID is registered.
public struct UnknownRelayAccessory: Error, CustomStringConvertible {
    public var id: String

    public init(id: String) {
        self.id = id
    }

    public var description: String { "no accessory \(id) is registered with this relay" }
}

/// The most accessory IDs one ``RelayStorage/inboxDigests(of:)`` call takes: well under the
/// bound parameters a statement may have in SQLite (32,766) and PostgreSQL (65,535).
public let maxDigestLookup = 500

/// Where a relay keeps its accessories and their queues (docs/PROTOCOL.md §11.4): SQLite on one
/// machine, or PostgreSQL shared by several relay instances. Every method that changes the
/// queues returns only once the change is durable. The rules (limits, what to send) are this
/// module's; a store only applies them.
public protocol RelayStorage: Sendable {
    var limits: RelayLimits { get }

    /// Registers an accessory with the digests of its two tokens; registering it again replaces
    /// them (a new pairing) and keeps what waits for it.
    func register(accessory id: String, inbox: RelayToken, post: RelayToken) async throws

    /// Whether `token` is the accessory's token for `role`; an unknown accessory is refused the
    /// same way as a wrong token.
    func authorizes(_ token: String, accessory id: String, as role: RelayRole) async throws -> Bool

    /// The digests of the inbox tokens of those of `ids` that are registered, in one query, for
    /// the relay's check of its open inboxes. More than ``maxDigestLookup`` IDs are refused
    /// (`RelayError.tooLarge`).
    func inboxDigests(of ids: [String]) async throws -> [String: [UInt8]]

    /// Queues several posts in one transaction (group commit); each is admitted or refused on its
    /// own (``RelayAdmission``) against the queue as the posts before it left it. A failure of
    /// the store itself fails the whole batch (thrown).
    func postBatch(_ posts: [(message: [UInt8], accessoryID: String)], now: Date) async throws -> [Result<UInt64, any Error>]

    /// Up to `limit` unexpired messages numbered above `after`, ascending.
    func fetch(for id: String, after: UInt64, limit: Int, now: Date) async throws -> [(seq: UInt64, message: [UInt8])]

    /// Deletes what the accessory acknowledged: its messages numbered up to `upTo`.
    func forget(for id: String, upTo: UInt64) async throws

    /// Deletes every expired message and returns how many.
    func sweep(now: Date) async throws -> Int

    /// What waits for an accessory, as the queue totals say; nil if it is not registered.
    func queue(of id: String) async throws -> RelayAdmission.Queue?

    /// Records where the accessory's replies are pushed (a new one replaces the old).
    func setPushTarget(_ target: PushTarget, accessory id: String) async throws

    /// Where the accessory's replies are pushed; nil until the companion app registered.
    func pushTarget(of id: String) async throws -> PushTarget?

    /// What other relay instances sharing this store do that concerns the inboxes open here:
    /// the messages they queue, as they commit, and the inboxes they open (with SQLite there is
    /// no other instance, and nothing is ever yielded).
    func elsewhere() -> AsyncStream<RelayElsewhere>

    /// Tells the other instances sharing this store that an inbox of `id` opened here, so that
    /// one of theirs ends (one inbox per accessory, docs/PROTOCOL.md §11.5). Nothing to tell
    /// with SQLite.
    func announceInbox(of id: String) async throws
}

/// What another relay instance sharing the store did (``RelayStorage/elsewhere()``).
public enum RelayElsewhere: Sendable, Equatable {
    /// It queued a message for this accessory.
    case posted(String)
    /// An inbox of this accessory opened there.
    case inboxOpened(String)
}

/// Where an accessory's replies are pushed (docs/PROTOCOL.md §11.5): the push token iOS gave
/// the companion app for internet sessions, and the app's bundle ID, whose
/// `<bundle ID>.push-type.accessory` is the APNs topic.
public struct PushTarget: Sendable, Hashable, Codable {
    /// Hex digits, as the companion app writes `session.pushToken`.
    public var token: String
    public var bundleID: String

    public static let maxTokenLength = 200
    public static let maxBundleIDLength = 155

    public init(token: String, bundleID: String) throws(RelayError) {
        guard (2...Self.maxTokenLength).contains(token.count), token.count.isMultiple(of: 2), token.allSatisfy(\.isHexDigit), token.allSatisfy(\.isASCII) else {
            throw RelayError(.malformed, "a push token is 2 to \(Self.maxTokenLength) hex digits, an even number of them")
        }
        guard (1...Self.maxBundleIDLength).contains(bundleID.utf8.count),
              bundleID.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-") }) else {
            throw RelayError(.malformed, "a bundle ID is 1 to \(Self.maxBundleIDLength) of A–Z, a–z, 0–9, '.' and '-'")
        }
        self.token = token.lowercased()
        self.bundleID = bundleID
    }

    /// The `apns-topic` of a push of type `accessory`.
    public var topic: String { "\(bundleID).push-type.accessory" }
}
