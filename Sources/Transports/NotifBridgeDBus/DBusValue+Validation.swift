extension DBusValue {
    /// Deepest nesting of containers accepted when writing or reading. The spec allows 32
    /// arrays plus 32 structures; a hostile peer must not be able to recurse further than that.
    public static let maxNesting = 64

    /// Throws `.invalidValue` if this value cannot be encoded as it stands: container contents
    /// that differ from the declared signature, a dictionary key that is not basic, an empty
    /// structure, a NUL inside a string, or a bad object path or signature.
    ///
    /// Checked before any byte is appended, because sd-bus answers a half-written container
    /// with a bare errno and leaves the message unusable.
    public func validate() throws(DBusError) {
        try validate(depth: 0)
        let length = signature.utf8.count
        guard length <= DBusSignature.maxLength else {
            throw .invalidValue("signature is \(length) bytes, over the limit of \(DBusSignature.maxLength)")
        }
    }

    /// Validates a whole message body.
    public static func validate(_ values: [DBusValue]) throws(DBusError) {
        for value in values { try value.validate() }
        let length = signature(of: values).utf8.count
        guard length <= DBusSignature.maxLength else {
            throw .invalidValue("body signature is \(length) bytes, over the limit of \(DBusSignature.maxLength)")
        }
    }

    private func validate(depth: Int) throws(DBusError) {
        guard depth <= Self.maxNesting else { throw .invalidValue("nested deeper than \(Self.maxNesting) levels") }
        switch self {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .bytes:
            return
        case .string(let string):
            try Self.checkNoNUL(string, "string")
        case .objectPath(let path):
            try Self.checkNoNUL(path, "object path")
            guard DBusNames.isValidObjectPath(path) else { throw .invalidValue("\"\(path)\" is not a valid object path") }
        case .signature(let signature):
            try Self.checkNoNUL(signature, "signature")
            guard DBusSignature.isValid(signature) else { throw .invalidValue("\"\(signature)\" is not a valid signature") }
        case .array(let element, let elements):
            guard DBusSignature.isSingleCompleteType(element) else {
                throw .invalidValue("array element signature \"\(element)\" is not a single complete type")
            }
            for value in elements {
                guard value.signature == element else {
                    throw .invalidValue("array of \(element) holds a value of type \(value.signature)")
                }
                try value.validate(depth: depth + 1)
            }
        case .dictionary(let key, let value, let entries):
            guard DBusSignature.isBasic(key) else { throw .invalidValue("dictionary key type \"\(key)\" is not a basic type") }
            guard DBusSignature.isSingleCompleteType(value) else {
                throw .invalidValue("dictionary value signature \"\(value)\" is not a single complete type")
            }
            for (entryKey, entryValue) in entries {
                guard entryKey.signature == key, entryValue.signature == value else {
                    throw .invalidValue("a{\(key)\(value)} holds an entry of type {\(entryKey.signature)\(entryValue.signature)}")
                }
                try entryKey.validate(depth: depth + 1)
                try entryValue.validate(depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidValue("a structure needs at least one field") }
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            guard inner.signature.utf8.count <= DBusSignature.maxLength else {
                throw .invalidValue("variant contents' signature is over \(DBusSignature.maxLength) bytes")
            }
            try inner.validate(depth: depth + 1)
        }
    }

    /// C strings end at the first NUL, so a Swift string holding one would be cut silently.
    private static func checkNoNUL(_ string: String, _ what: String) throws(DBusError) {
        guard !string.utf8.contains(0) else { throw .invalidValue("\(what) contains a NUL byte") }
    }
}
