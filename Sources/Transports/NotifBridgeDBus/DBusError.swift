import Glibc

/// Everything the D-Bus layer can throw.
public enum DBusError: Error, Equatable, Sendable {
    /// The peer answered with a D-Bus error reply, e.g. `org.freedesktop.DBus.Error.UnknownMethod`.
    /// Timeouts arrive this way too (`NoReply`), as sd-bus synthesizes such replies.
    case errorReply(name: String, message: String)
    /// A value, name or path that cannot be put on the wire; nothing was sent.
    case invalidValue(String)
    /// A received message whose body could not be read.
    case malformedMessage(String)
    /// A value of another type than the caller asked for, e.g. `as` where `a{sv}` was expected.
    case typeMismatch(expected: String, actual: String)
    /// An sd-bus call failed with this errno.
    case system(operation: String, errno: Int32)
    /// The connection is closed, or closed before the operation finished.
    case closed
    /// libsystemd (sd-bus) cannot be loaded on this machine; the text says what to install.
    case libraryUnavailable(String)

    /// Throws `.system` for a negative sd-bus return value; passes others through.
    @discardableResult
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(DBusError) -> Int32 {
        guard result < 0 else { return result }
        throw .system(operation: operation(), errno: -result)
    }
}

extension DBusError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .errorReply(let name, let message): message.isEmpty ? name : "\(name): \(message)"
        case .invalidValue(let reason): "invalid D-Bus value: \(reason)"
        case .malformedMessage(let reason): "malformed D-Bus message: \(reason)"
        case .typeMismatch(let expected, let actual): "expected a D-Bus value of type \(expected), got \(actual)"
        case .system(let operation, let errno): "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        case .closed: "the D-Bus connection is closed"
        case .libraryUnavailable(let reason): reason
        }
    }
}

/// Well-known error names, for replies and for matching thrown `errorReply`s.
public enum DBusErrorName {
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
}
