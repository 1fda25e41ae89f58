import Glibc
import Synchronization

/// Writes lines to standard output straight away (one write per call), so pipes see them at once.
/// When standard output goes away (the reader of a pipe exits, journald restarts), writing stops
/// with one note on standard error and the process goes on: what the accessory stores and
/// acknowledges does not depend on anyone reading its lines. (SIGPIPE is ignored process-wide.)
public struct LineWriter: Sendable {
    private static let closed = Atomic<Bool>(false)

    public init() {}

    public func write(_ line: String) {
        write(text: line + "\n")
    }

    public func write(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        write(text: lines.joined(separator: "\n") + "\n")
    }

    /// Writes `text` as it is (end it with a newline).
    public func write(text: String) {
        guard !Self.closed.load(ordering: .relaxed) else { return }
        var text = text
        let failure = text.withUTF8 { Self.writeAll(UnsafeRawBufferPointer($0)) }
        guard let failure, !Self.closed.exchange(true, ordering: .relaxed) else { return }
        var note = "notifbridge: standard output is closed (\(String(cString: strerror(failure)))); nothing more is printed there\n"
        _ = note.withUTF8 { Self.writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }
    }

    /// Writes every byte, through short writes and interruptions; the errno that stopped it, if any.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32 = STDOUT_FILENO) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
