import Foundation
import NotifBridgeFiles
import NotifBridgeHostCore
import Synchronization

/// The simulated iPhone's keychain entry for the internet transport: an ``InternetPairing`` as
/// JSON in a 0600 file, replaced atomically and fsynced each time it changes, because a message
/// key must never be used twice: the state after a seal is on disk before the message leaves.
public struct InternetPairingFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// A pairing is a few hundred bytes of JSON; a longer file is someone else's.
    public static let maxFileLength = 64 * 1024

    /// The pairing, or nil when no X-Wing exchange has been saved here yet.
    public func load() throws(Failure) -> InternetPairing? {
        let mode: UInt16?
        do {
            mode = try DurableFile.mode(path)
        } catch {
            throw Failure(description: "cannot read the internet pairing \(path): \(error.reason)")
        }
        guard let mode else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw Failure(description: "the internet pairing \(path) is a directory; give the path of a file (an X-Wing exchange over a link saves it)")
        }
        guard mode & 0o077 == 0 else {
            throw Failure(description: "the internet pairing \(path) has mode \(String(mode, radix: 8)); it holds keys and must be 600 (chmod 600 \(path))")
        }
        let bytes: Data
        do {
            bytes = try fileContents(path, limit: Self.maxFileLength)
        } catch {
            throw Failure(description: "cannot read the internet pairing \(path): \(error)")
        }
        let pairing: InternetPairing
        do {
            pairing = try JSONDecoder().decode(InternetPairing.self, from: bytes)
        } catch {
            // Swift's description of a decoding error names its types, not the file's mistake.
            throw Failure(description: "\(path) is not an internet pairing saved by the simulated iPhone (`phone --internet-pairing` writes one after an X-Wing exchange over a link)")
        }
        guard pairing.keyID.count == 4, pairing.sending.chainKey.count == 32, pairing.receiving.chainKey.count == 32 else {
            throw Failure(description: "the internet pairing \(path) has a key ID or chain key of the wrong length")
        }
        return pairing
    }

    /// Whether `save` may write here: nothing is at the path yet, or a pairing is. Any other file
    /// (a key, a document, a typo's victim) is refused, never replaced.
    /// Checked before connecting, so the exchange's keys are not made only to be lost: a new
    /// pairing also needs a directory it can be written into.
    public func checkReplaceable() throws(Failure) {
        let existing: InternetPairing?
        do {
            existing = try load()
        } catch {
            throw Failure(description: "will not save the internet pairing over \(path): \(error.description); give --internet-pairing a path of its own")
        }
        guard existing == nil else { return }
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw Failure(description: "cannot save the internet pairing at \(path): \(directory) is not a directory")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw Failure(description: "cannot save the internet pairing at \(path): \(directory) is not writable")
        }
    }

    /// Replaces the pairing; refuses (``checkReplaceable()``) a file that holds something else.
    public func save(_ pairing: InternetPairing) throws(Failure) {
        try checkReplaceable()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let bytes: Data
        do {
            bytes = try encoder.encode(pairing)
        } catch {
            throw Failure(description: "cannot encode the internet pairing: \(error)")
        }
        do {
            try DurableFile.replace(path, with: bytes)
        } catch {
            throw Failure(description: "\(error)")
        }
    }
}

/// The system's internet transport for events (docs/PROTOCOL.md §11): each operation is sealed
/// with the next ratchet key, the new state is saved, and only then is the message handed to
/// `post` (the transport extension's upload to the relay). A post that fails has used its key
/// and sequence number all the same; the event is sent again, under its number, by whichever
/// transport comes next, and the accessory's ledger stores it once.
public final class InternetTransport: Sendable {
    public typealias Post = @Sendable (Data) async throws(AccessoryMessageError) -> Void

    private let file: InternetPairingFile
    private let post: Post
    private let sender: Mutex<InternetSender>

    /// - Throws: when the file cannot be read, or holds no pairing yet.
    public init(file: InternetPairingFile, post: @escaping Post) throws(InternetPairingFile.Failure) {
        guard let pairing = try file.load() else {
            throw InternetPairingFile.Failure(description: "no internet pairing in \(file.path): make an X-Wing key exchange over a link first, saving it with --internet-pairing")
        }
        self.file = file
        self.post = post
        sender = Mutex(InternetSender(pairing: pairing))
    }

    public var pairing: InternetPairing { sender.withLock { $0.pairing } }

    /// Seals, saves and posts one operation, numbered after the last event this pairing
    /// carried; returns its sequence number once the relay took it.
    public func send(_ operation: HostOperation, now: Date = Date()) async throws -> UInt64 {
        try await send { sender throws in try sender.seal(operation, now: now) }
    }

    /// Seals, saves and posts an event the data provider already numbered (the system keeps one
    /// numbering across all its transports).
    public func send(_ outbound: NotificationsForwarder.Outbound) async throws -> UInt64 {
        try await send { sender throws in try sender.seal(outbound) }
    }

    private func send(_ seal: (inout InternetSender) throws -> InternetSender.Sealed) async throws -> UInt64 {
        let sealed = try sender.withLock { sender in
            var next = sender
            let sealed = try seal(&next)
            try file.save(next.pairing)
            sender = next
            return sealed
        }
        try await post(sealed.message)
        return sealed.sequence
    }
}
