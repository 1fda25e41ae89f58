import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files that must survive a power cut as either the old or the new contents (the
/// accessory's key, the iPhone's internet ratchet state), and files only their owner may read.
public enum DurableFile {
    public struct WriteFailure: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Replaces the file at `path` atomically: a 0600 temporary file beside it, fsync, rename,
    /// then fsync of the directory, without which a power cut can lose the rename and bring the
    /// old contents back after they were reported replaced.
    public static func replace(_ path: String, with bytes: some DataProtocol) throws(WriteFailure) {
        let contents = Data(bytes)
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw WriteFailure(path: temporary, reason: lastError()) }
        // The errno of what failed, or a short write's count: "No space left on device" says
        // what to do, "a write failed" does not.
        var failure: String?
        var offset = 0
        while failure == nil, offset < contents.count {
            let written = contents.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                failure = written < 0 ? lastError() : "wrote \(offset) of \(contents.count) bytes"
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = "fsync failed: \(lastError())" }
        close(fd)
        if let failure {
            unlink(temporary)
            throw WriteFailure(path: temporary, reason: failure)
        }
        guard rename(temporary, path) == 0 else {
            let reason = lastError()
            unlink(temporary)
            throw WriteFailure(path: path, reason: reason)
        }
        let folder = (path as NSString).deletingLastPathComponent
        let directory = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw WriteFailure(path: path, reason: "cannot open its directory to sync the rename: \(lastError())") }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw WriteFailure(path: path, reason: "fsync of its directory failed: \(lastError())") }
    }

    /// Creates `path` as an empty 0600 file unless it exists. A database opened there is never
    /// readable by others, not even for a moment, and neither are its WAL and shared-memory
    /// files, which SQLite creates with the database file's mode.
    public static func createPrivate(_ path: String) throws(WriteFailure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw WriteFailure(path: path, reason: lastError())
        }
        close(fd)
    }

    /// The file's permission bits, or nil if it does not exist; throws any other failure.
    public static func mode(_ path: String) throws(WriteFailure) -> UInt16? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw WriteFailure(path: path, reason: lastError())
        }
        return UInt16(info.st_mode & 0o777)
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
