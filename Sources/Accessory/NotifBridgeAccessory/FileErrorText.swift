import Foundation

/// Why reading or writing `path` failed, in the system's words ("No such file or directory
/// (errno 2)", "it is a directory, not a file"). Foundation on Linux describes reading a
/// directory as "The operation could not be completed. (NSCocoaErrorDomain error 256.)", and
/// an error printed whole is an NSError dump. Here, beside ``PolicyFile``, for the policy and the
/// command line's files alike.
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
