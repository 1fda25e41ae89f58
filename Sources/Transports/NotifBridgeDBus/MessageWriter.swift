import CSystemdBus

/// The one-byte type code sd-bus takes for `code`, e.g. `typeCode("s")`.
func typeCode(_ code: Unicode.Scalar) -> CChar {
    CChar(truncatingIfNeeded: UInt8(ascii: code))
}

/// Appends values to an sd-bus message under construction, using only the non-variadic calls
/// (`sd_bus_message_append` is variadic and not imported into Swift).
enum MessageWriter {
    /// Validates `values` as a whole, then appends them in order. On a throw the message may be
    /// half-written and must be discarded, as sd-bus cannot undo an append.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        try DBusValue.validate(values)
        for value in values { try append(value, to: message) }
    }

    private static func append(_ value: DBusValue, to message: OpaquePointer) throws(DBusError) {
        switch value {
        case .byte(let v): try basic(message, "y", v)
        // sd-bus reads a `b` as a C int, not as a one-byte Bool.
        case .bool(let v): try basic(message, "b", Int32(v ? 1 : 0))
        case .int16(let v): try basic(message, "n", v)
        case .uint16(let v): try basic(message, "q", v)
        case .int32(let v): try basic(message, "i", v)
        case .uint32(let v): try basic(message, "u", v)
        case .int64(let v): try basic(message, "x", v)
        case .uint64(let v): try basic(message, "t", v)
        case .double(let v): try basic(message, "d", v)
        case .string(let v): try text(message, "s", v)
        case .objectPath(let v): try text(message, "o", v)
        case .signature(let v): try text(message, "g", v)
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { buffer in
                sd_bus_message_append_array(message, typeCode("y"), buffer.baseAddress, buffer.count)
            }
            try DBusError.check(result, "appending ay of \(bytes.count) bytes")
        case .array(let element, let elements):
            try container(message, "a", element) { () throws(DBusError) in
                for element in elements { try append(element, to: message) }
            }
        case .dictionary(let key, let valueType, let entries):
            try container(message, "a", "{" + key + valueType + "}") { () throws(DBusError) in
                for (entryKey, entryValue) in entries {
                    try container(message, "e", key + valueType) { () throws(DBusError) in
                        try append(entryKey, to: message)
                        try append(entryValue, to: message)
                    }
                }
            }
        case .structure(let fields):
            try container(message, "r", DBusValue.signature(of: fields)) { () throws(DBusError) in
                for field in fields { try append(field, to: message) }
            }
        case .variant(let inner):
            try container(message, "v", inner.signature) { () throws(DBusError) in
                try append(inner, to: message)
            }
        }
    }

    private static func basic<T: BitwiseCopyable>(_ message: OpaquePointer, _ code: Unicode.Scalar, _ value: T) throws(DBusError) {
        let result = withUnsafePointer(to: value) { sd_bus_message_append_basic(message, typeCode(code), $0) }
        try DBusError.check(result, "appending \(code)")
    }

    private static func text(_ message: OpaquePointer, _ code: Unicode.Scalar, _ value: String) throws(DBusError) {
        let result = value.withCString { sd_bus_message_append_basic(message, typeCode(code), $0) }
        try DBusError.check(result, "appending \(code)")
    }

    /// Opens a container of `kind` (`a`, `e`, `r`, `v`) with `contents`, runs `body`, closes it.
    private static func container(
        _ message: OpaquePointer,
        _ kind: Unicode.Scalar,
        _ contents: String,
        _ body: () throws(DBusError) -> Void
    ) throws(DBusError) {
        try DBusError.check(sd_bus_message_open_container(message, typeCode(kind), contents), "opening \(kind) container \(contents)")
        try body()
        try DBusError.check(sd_bus_message_close_container(message), "closing \(kind) container \(contents)")
    }
}
