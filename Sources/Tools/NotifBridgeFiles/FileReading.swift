import Foundation

/// Why reading or writing `path` failed, in the system's words ("No such file or directory
/// (errno 2)", "it is a directory, not a file"). Foundation on Linux describes reading a
/// directory as "The operation could not be completed. (NSCocoaErrorDomain error 256.)", and
/// an error printed whole is an NSError dump. For every file a user or a peer names: the policy,
/// the command line's files, the keys and tokens the accessory, the phone and the relay keep.
public func fileErrorText(_ error: any Error, path: String) -> String {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        return "it is a directory, not a file"
    }
    let error = error as NSError
    let posix = error.domain == NSPOSIXErrorDomain ? error : error.userInfo[NSUnderlyingErrorKey] as? NSError
    if let posix, posix.domain == NSPOSIXErrorDomain {
        return "\(String(cString: strerror(Int32(posix.code)))) (errno \(posix.code))"
    }
    if error.domain == NSCocoaErrorDomain {
        switch CocoaError.Code(rawValue: error.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "No such file or directory"
        case .fileReadNoPermission, .fileWriteNoPermission: return "Permission denied"
        default: break
        }
    }
    return error.localizedDescription
}

/// A file that could not be read, or was longer than its limit.
public struct FileReadFailure: Error, CustomStringConvertible {
    public var description: String
}

/// The bytes of the file at `path`, read to at most `limit`: a longer file is refused once its
/// limit is passed, before more is buffered (so `/dev/zero` is refused, not read until memory
/// runs out). Read as a stream, so that a pipe, a device or a process substitution (`<(…)`)
/// works as a file does; Foundation's `Data(contentsOf:)` refuses those as "Permission denied".
public func fileContents(_ path: String, limit: Int) throws(FileReadFailure) -> Data {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
        let code = errno
        throw FileReadFailure(description: fileErrorText(NSError(domain: NSPOSIXErrorDomain, code: Int(code)), path: path))
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var data = Data()
    do {
        while data.count <= limit, let chunk = try handle.read(upToCount: min(64 * 1024, limit + 1 - data.count)), !chunk.isEmpty {
            data.append(chunk)
        }
    } catch {
        throw FileReadFailure(description: fileErrorText(error, path: path))
    }
    guard data.count <= limit else { throw FileReadFailure(description: "it is longer than \(limit) bytes") }
    return data
}
