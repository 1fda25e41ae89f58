import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``prepareStateDirectory(_:)`` found and did.
public enum StateDirectoryPreparation: Sendable, Equatable {
    case created
    /// It existed with no access for group or others.
    case kept
    /// It existed with this mode, which let group or others in; now only its owner's bits remain.
    case tightened(from: UInt16)
}

/// The state directory can hold the key and the store only as its owner's alone.
public struct StateDirectoryFailure: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "state directory \(path): \(reason)" }
}

/// Makes `path` a 0700 directory of this user's: creates it so (and any missing parents), or
/// tightens an existing one of ours. A directory owned by another user is refused, even at
/// 0700: its owner could change the mode back or replace the key and the store in it.
@discardableResult
public func prepareStateDirectory(_ path: String) throws(StateDirectoryFailure) -> StateDirectoryPreparation {
    var info = stat()
    guard stat(path, &info) == 0 else {
        guard errno == ENOENT else { throw failure(path, "cannot be examined: \(String(cString: strerror(errno)))") }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw failure(path, "cannot be created: \((error as NSError).localizedDescription)")
        }
        // The mode given to mkdir is reduced by the umask; this is exact.
        guard chmod(path, 0o700) == 0 else { throw failure(path, "cannot be made 0700: \(String(cString: strerror(errno)))") }
        return .created
    }
    guard info.st_mode & S_IFMT == S_IFDIR else { throw failure(path, "exists and is not a directory") }
    let owner = info.st_uid
    guard owner == geteuid() else {
        throw failure(path, "is owned by uid \(owner), not by this user (uid \(geteuid())); its owner could read or replace the files kept in it, so use a directory of your own")
    }
    let mode = UInt16(info.st_mode & 0o7777)
    guard mode & 0o077 != 0 else { return .kept }
    guard chmod(path, mode_t(mode & 0o700)) == 0 else {
        throw failure(path, "has mode \(String(mode, radix: 8)) and cannot be made 0700: \(String(cString: strerror(errno)))")
    }
    return .tightened(from: mode)
}

private func failure(_ path: String, _ reason: String) -> StateDirectoryFailure {
    StateDirectoryFailure(path: path, reason: reason)
}
