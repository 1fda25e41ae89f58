import Crypto
import Foundation

/// A bearer token the relay hands out once and keeps only as a SHA-256 digest, so a copy of its
/// database lets no one post for an accessory or read its queue. Each accessory has two: one to
/// read its inbox (the accessory's), one to post to it (the companion app's).
public struct RelayToken: Sendable, Hashable {
    /// 32 random bytes, base64url without padding: 43 characters.
    public let text: String

    public static let byteCount = 32

    /// From the caller's randomness (the relay passes the system's; tests pass a seeded source).
    public init(randomBytes: [UInt8]) throws(RelayError) {
        guard randomBytes.count == Self.byteCount else {
            throw RelayError(.malformed, "a relay token is made of \(Self.byteCount) random bytes, got \(randomBytes.count)")
        }
        text = Data(randomBytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// What the relay stores.
    public var digest: [UInt8] { Self.digest(of: text) }

    public static func digest(of presented: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(presented.utf8)))
    }

    /// Whether `presented` is the token whose digest is `stored`. Compares digests in constant
    /// time, so the time taken says nothing about how much of a guess was right.
    public static func matches(_ presented: String, stored: [UInt8]) -> Bool {
        let candidate = digest(of: presented)
        guard candidate.count == stored.count else { return false }
        return zip(candidate, stored).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Whether the relay takes a posted message for an accessory, given what already waits for it.
/// A full queue refuses the post rather than dropping a waiting message: the sender learns of
/// it (the transport extension answers `.transportFailed`, and the system retries later), while a
/// dropped message would be lost without anyone knowing.
public enum RelayAdmission {
    public struct Queue: Sendable, Hashable {
        public var messages: Int
        public var bytes: Int

        public init(messages: Int, bytes: Int) {
            self.messages = messages
            self.bytes = bytes
        }
    }

    /// Returns when the message expires, or why it is refused.
    public static func admit(length: Int, to queue: Queue, now: Date, limits: RelayLimits) throws(RelayError) -> Date {
        guard length > 0 else { throw RelayError(.malformed, "an empty message") }
        guard length >= RelayLimits.minMessageLength else {
            throw RelayError(
                .malformed,
                "a message of \(length) bytes is shorter than the \(RelayLimits.minMessageLength) of a key ID, an index, a nonce and a tag")
        }
        guard length <= limits.maxMessageLength else {
            throw RelayError(.tooLarge, "a message of \(length) bytes is over the limit of \(limits.maxMessageLength)")
        }
        guard queue.messages < limits.maxQueuedMessages else {
            throw RelayError(.queueFull, "\(queue.messages) messages already wait for this accessory (at most \(limits.maxQueuedMessages))")
        }
        guard queue.bytes + length <= limits.maxQueuedBytes else {
            throw RelayError(.queueFull, "\(queue.bytes) bytes already wait for this accessory; \(length) more is over \(limits.maxQueuedBytes)")
        }
        return now.addingTimeInterval(limits.timeToLive / .seconds(1))
    }
}
