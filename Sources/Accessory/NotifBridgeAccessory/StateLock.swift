import Foundation
import Synchronization

/// One accessory per state directory: an exclusive `flock` on `accessory.lock` inside it, taken
/// before the key and the store are touched. Two daemons on one key and one store would answer
/// the same iPhone with diverging exchanges and ratchets; the control socket alone cannot keep
/// them apart (two starts race for it, and a removed socket file hides a running daemon).
/// The kernel drops the lock when the process dies, so a crash leaves nothing to clean up.
///
/// A flock belongs to the open file, not the process: a child forked at the moment a daemon
/// lets go keeps a copy of the descriptor until it execs, and with it the lock. So a lock that
/// names this process but is not one it holds (``heldHere``) is such a copy, and is waited for
/// briefly instead of refused.
final class StateLock: Sendable {
    /// Another process (or another daemon in this one) holds the lock.
    struct Held: Error, CustomStringConvertible {
        var directory: String
        var path: String
        var holder: Int32?
        var description: String {
            let who = holder.map { "process \($0) holds \(path)" } ?? "\(path) is locked"
            return "another accessory is already running with the state directory \(directory) (\(who)); stop it first, or give this one its own --state"
        }
    }

    struct Unopened: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot open the lock file \(path): \(reason)" }
    }

    static let fileName = "accessory.lock"
    /// The lock file holds the holder's process ID, in decimal: a few bytes.
    static let maxFileLength = 32
    /// How long a copy of this process's released lock is waited for: a forked child holds it
    /// only until it execs.
    static let forkedCopyGrace = Duration.seconds(1)

    /// The lock files this process holds, by device and inode (a path can be spelled many ways).
    private static let heldHere = Mutex<Set<FileIdentity>>([])

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    let directory: String
    let path: String
    private let descriptor: Mutex<Int32?>
    private let identity: FileIdentity

    /// Takes the lock, or throws ``Held`` at once if another process or another daemon in this
    /// one holds it. Only a copy of a lock this process let go is waited for, up to `grace`.
    init(directory: String, grace: Duration = forkedCopyGrace) throws {
        self.directory = directory
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Unopened(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Unopened(path: path, reason: reason)
        }
        let file = FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let deadline = ContinuousClock.now + grace
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            let holder = Self.holder(fd)
            let forkedCopy = holder == getpid() && !Self.heldHere.withLock { $0.contains(file) }
            guard failure == EWOULDBLOCK, forkedCopy, ContinuousClock.now < deadline else {
                close(fd)
                guard failure == EWOULDBLOCK else { throw Unopened(path: path, reason: String(cString: strerror(failure))) }
                throw Held(directory: directory, path: path, holder: holder)
            }
            usleep(10_000)
        }
        Self.heldHere.withLock { _ = $0.insert(file) }
        identity = file
        // For the message a second start prints; the lock, not this number, is what counts.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 {
            _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        descriptor = Mutex(fd)
    }

    /// Lets another daemon start on this directory. Idempotent.
    func release() {
        descriptor.withLock { fd in
            guard let open = fd else { return }
            Self.heldHere.withLock { _ = $0.remove(identity) }
            close(open)
            fd = nil
        }
    }

    deinit { release() }

    private static func holder(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: maxFileLength)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
