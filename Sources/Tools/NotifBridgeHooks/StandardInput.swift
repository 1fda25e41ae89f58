import Foundation
import Glibc
import SystemPackage

/// A child's stdin as a file rather than a pipe. swift-subprocess writes pipe input from the
/// calling thread and leaves SIGPIPE alone, so a hook that exits without reading its stdin would
/// kill this whole process unless SIGPIPE were ignored process-wide, which is the host
/// program's choice to make. A file has no reader to lose: the child reads the bytes, or skips
/// them, and nothing is written once it runs.
enum StandardInput {
    /// An anonymous in-memory file (memfd) holding `data`, positioned at its start; an
    /// unlinked temporary file where the C library lacks memfd_create.
    static func memoryFile(_ data: Data) throws -> FileDescriptor {
        let descriptor = try anonymousFile()
        do {
            try data.withUnsafeBytes { bytes in
                _ = try descriptor.writeAll(bytes)
            }
            _ = try descriptor.seek(offset: 0, from: .start)
        } catch {
            try? descriptor.close()
            throw error
        }
        return descriptor
    }

    static func null() throws -> FileDescriptor {
        try FileDescriptor.open("/dev/null", .readOnly, options: .closeOnExec)
    }

    /// Close-on-exec, so concurrent spawns don't inherit it: each child gets its own copy as fd 0.
    private static func anonymousFile() throws -> FileDescriptor {
        typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>?, UInt32) -> Int32
        let closeOnExec: UInt32 = 1  // MFD_CLOEXEC
        if let symbol = dlsym(nil, "memfd_create") {
            let memfdCreate = unsafeBitCast(symbol, to: MemfdCreate.self)
            let descriptor = memfdCreate("notifbridge-stdin", closeOnExec)
            guard descriptor >= 0 else { throw Errno(rawValue: errno) }
            return FileDescriptor(rawValue: descriptor)
        }
        var template = Array((NSTemporaryDirectory() + "/notifbridge-stdin.XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        return FileDescriptor(rawValue: descriptor)
    }
}
