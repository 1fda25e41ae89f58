import CSystemdBus
import Glibc

/// Reads a message body into values by walking its signature with sd-bus's peek, enter, read
/// and exit calls. Every result is checked: a failure throws `.malformedMessage`, never traps.
enum MessageReader {
    /// Reads from the message's read position (the start, for a received message) to the end.
    static func readBody(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        try readSequence(message, depth: 0)
    }

    /// Reads values until the end of the current container (or of the body).
    private static func readSequence(_ message: OpaquePointer, depth: Int) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let (code, contents) = try peek(message) {
            values.append(try readValue(message, code: code, contents: contents, depth: depth))
        }
        return values
    }

    /// The next value's type code and, for containers, its contents signature; nil at the end.
    private static func peek(_ message: OpaquePointer) throws(DBusError) -> (UInt8, String)? {
        var code: CChar = 0
        var contents: UnsafePointer<CChar>?
        let result = sd_bus_message_peek_type(message, &code, &contents)
        guard result >= 0 else { throw failure("peeking the next type", result) }
        guard result > 0 else { return nil }
        return (UInt8(bitPattern: code), contents.map { String(cString: $0) } ?? "")
    }

    private static func readValue(_ message: OpaquePointer, code: UInt8, contents: String, depth: Int) throws(DBusError) -> DBusValue {
        switch Unicode.Scalar(code) {
        case "y": return .byte(try basic(message, "y", UInt8(0)))
        case "b": return .bool(try basic(message, "b", Int32(0)) != 0)
        case "n": return .int16(try basic(message, "n", Int16(0)))
        case "q": return .uint16(try basic(message, "q", UInt16(0)))
        case "i": return .int32(try basic(message, "i", Int32(0)))
        case "u": return .uint32(try basic(message, "u", UInt32(0)))
        case "x": return .int64(try basic(message, "x", Int64(0)))
        case "t": return .uint64(try basic(message, "t", UInt64(0)))
        case "d": return .double(try basic(message, "d", Double(0)))
        case "s": return .string(try text(message, "s"))
        case "o": return .objectPath(try text(message, "o"))
        case "g": return .signature(try text(message, "g"))
        case "h": throw .malformedMessage("unix file descriptors (h) are not supported")
        default: break
        }
        guard depth < DBusValue.maxNesting else {
            throw .malformedMessage("containers nested deeper than \(DBusValue.maxNesting) levels")
        }
        switch Unicode.Scalar(code) {
        case "a" where contents == "y":
            return .bytes(try byteArray(message))
        case "a":
            return try inContainer(message, "a", contents) { () throws(DBusError) in
                guard let (key, value) = DBusSignature.dictionaryEntry(contents) else {
                    return .array(element: contents, try readSequence(message, depth: depth + 1))
                }
                var entries: [(DBusValue, DBusValue)] = []
                while try peek(message) != nil {
                    let pair = try inContainer(message, "e", key + value) { () throws(DBusError) in
                        try readSequence(message, depth: depth + 1)
                    }
                    guard pair.count == 2 else { throw .malformedMessage("dictionary entry with \(pair.count) values") }
                    entries.append((pair[0], pair[1]))
                }
                return .dictionary(key: key, value: value, entries)
            }
        case "r":
            let fields = try inContainer(message, "r", contents) { () throws(DBusError) in
                try readSequence(message, depth: depth + 1)
            }
            guard !fields.isEmpty else { throw .malformedMessage("empty structure") }
            return .structure(fields)
        case "v":
            let inner = try inContainer(message, "v", contents) { () throws(DBusError) in
                try readSequence(message, depth: depth + 1)
            }
            guard inner.count == 1 else { throw .malformedMessage("variant holding \(inner.count) values") }
            return .variant(inner[0])
        default:
            throw .malformedMessage("unexpected type code \(Unicode.Scalar(code)) (\(code))")
        }
    }

    private static func basic<T: BitwiseCopyable>(_ message: OpaquePointer, _ code: Unicode.Scalar, _ initial: T) throws(DBusError) -> T {
        var value = initial
        let result = sd_bus_message_read_basic(message, typeCode(code), &value)
        guard result > 0 else { throw failure("reading \(code)", result) }
        return value
    }

    /// A string, object path or signature: the pointer is checked and the bytes must be UTF-8.
    private static func text(_ message: OpaquePointer, _ code: Unicode.Scalar) throws(DBusError) -> String {
        var pointer: UnsafePointer<CChar>?
        let result = sd_bus_message_read_basic(message, typeCode(code), &pointer)
        guard result > 0 else { throw failure("reading \(code)", result) }
        guard let pointer else { throw .malformedMessage("reading \(code) gave no string") }
        guard let string = String(validatingCString: pointer) else { throw .malformedMessage("\(code) value is not valid UTF-8") }
        return string
    }

    /// `ay` in one read, copied out of the message's buffer before the message can go away.
    private static func byteArray(_ message: OpaquePointer) throws(DBusError) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        let result = sd_bus_message_read_array(message, typeCode("y"), &pointer, &size)
        guard result > 0 else { throw failure("reading ay", result) }
        guard size > 0 else { return [] }
        guard let pointer else { throw .malformedMessage("reading ay gave \(size) bytes but no buffer") }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Enters a container, reads it with `body`, and checks that `body` consumed all of it.
    private static func inContainer<T>(
        _ message: OpaquePointer,
        _ kind: Unicode.Scalar,
        _ contents: String,
        _ body: () throws(DBusError) -> T
    ) throws(DBusError) -> T {
        let entered = sd_bus_message_enter_container(message, typeCode(kind), contents)
        guard entered > 0 else { throw failure("entering \(kind) container \(contents)", entered) }
        let value = try body()
        let exited = sd_bus_message_exit_container(message)
        guard exited >= 0 else { throw failure("leaving \(kind) container \(contents)", exited) }
        return value
    }

    /// A read failure; 0 (nothing there) is reported as a truncated body.
    private static func failure(_ operation: String, _ result: Int32) -> DBusError {
        guard result < 0 else { return .malformedMessage("\(operation): body ended early") }
        return .malformedMessage("\(operation): \(String(cString: strerror(-result)))")
    }
}
