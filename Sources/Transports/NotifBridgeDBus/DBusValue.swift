/// One D-Bus value with its type, as it travels in a message body.
///
/// Containers carry their element signatures explicitly so that empty arrays and dictionaries
/// still have a type on the wire. Unix file descriptors (`h`) are not modelled: BlueZ's GATT
/// and advertising APIs only need them for AcquireWrite/AcquireNotify, which NotifBridge does
/// not offer.
public enum DBusValue: Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array whose elements all have `element` as their signature (a single complete type).
    /// Use ``bytes(_:)`` for `ay` and ``dictionary(key:value:_:)`` for `a{..}`.
    case array(element: String, [DBusValue])
    /// `ay`, kept as one buffer: GATT values are byte arrays and are read and written in bulk.
    case bytes([UInt8])
    /// `a{kv}`: `key` must be a basic type. Entry order is kept as given.
    case dictionary(key: String, value: String, [(DBusValue, DBusValue)])
    /// `(...)`: at least one field.
    case structure([DBusValue])
    /// `v`: the contained value carries its own signature.
    indirect case variant(DBusValue)
}

extension DBusValue {
    /// The value's D-Bus signature, e.g. `a{sv}` for a property map.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .bytes: "ay"
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// The signature of a whole message body with these values.
    public static func signature(of values: [DBusValue]) -> String {
        values.map(\.signature).joined()
    }
}

extension DBusValue: Equatable {
    /// Equality as seen on the wire: `.array(element: "y", ...)` of bytes equals `.bytes(...)`,
    /// since both encode as `ay` and a reader always returns `.bytes`.
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs.canonical, rhs.canonical) {
        case (.byte(let a), .byte(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        // Bit patterns, so that a NaN read back from a message equals the NaN that was sent.
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.signature(let a), .signature(let b)): a == b
        case (.array(let ea, let a), .array(let eb, let b)): ea == eb && a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.dictionary(let ka, let va, let a), .dictionary(let kb, let vb, let b)):
            ka == kb && va == vb && a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }

    /// `.array` of `.byte` values folded into `.bytes`; anything else unchanged.
    private var canonical: DBusValue {
        guard case .array("y", let elements) = self else { return self }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else { return self }
            bytes.append(byte)
        }
        return .bytes(bytes)
    }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .bool(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): v.debugDescription
        case .objectPath(let v): "path \(v)"
        case .signature(let v): "signature \(v)"
        case .array(let element, let values): "a\(element) [\(values.map(\.description).joined(separator: ", "))]"
        case .bytes(let v): "ay [\(v.count) bytes]"
        case .dictionary(let key, let value, let entries):
            "a{\(key)\(value)} {\(entries.map { "\($0.0): \($0.1)" }.joined(separator: ", "))}"
        case .structure(let fields): "(\(fields.map(\.description).joined(separator: ", ")))"
        case .variant(let inner): "<\(inner)>"
        }
    }
}
