/// An `a{sv}` property map as Swift sees it: property name to the value inside its variant.
public typealias DBusProperties = [String: DBusValue]

/// An `a{oa{sa{sv}}}` GetManagedObjects result: object path to interface name to properties.
public typealias DBusManagedObjects = [String: [String: DBusProperties]]

extension DBusValue {
    /// `as`.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(element: "s", strings.map(DBusValue.string))
    }

    /// `ao`.
    public static func objectPathArray(_ paths: [String]) -> DBusValue {
        .array(element: "o", paths.map(DBusValue.objectPath))
    }

    /// `a{sv}`, with keys sorted so that the bytes on the wire do not depend on hashing.
    public static func properties(_ properties: DBusProperties) -> DBusValue {
        .dictionary(key: "s", value: "v", properties.sorted { $0.key < $1.key }.map { (.string($0.key), .variant($0.value)) })
    }

    /// `a{sa{sv}}`: interfaces with their properties, as in InterfacesAdded.
    public static func interfaces(_ interfaces: [String: DBusProperties]) -> DBusValue {
        .dictionary(key: "s", value: "a{sv}", interfaces.sorted { $0.key < $1.key }.map { (.string($0.key), .properties($0.value)) })
    }

    /// `a{oa{sa{sv}}}`: the reply body of ObjectManager.GetManagedObjects.
    public static func managedObjects(_ objects: DBusManagedObjects) -> DBusValue {
        .dictionary(key: "o", value: "a{sa{sv}}", objects.sorted { $0.key < $1.key }.map { (.objectPath($0.key), .interfaces($0.value)) })
    }

    /// Reads an `a{sv}`, unwrapping each variant. A repeated key keeps its last value.
    public func asProperties() throws(DBusError) -> DBusProperties {
        guard case .dictionary("s", "v", let entries) = self else { throw .typeMismatch(expected: "a{sv}", actual: signature) }
        var properties: DBusProperties = [:]
        for (key, value) in entries {
            guard case .string(let name) = key, case .variant(let inner) = value else {
                throw .typeMismatch(expected: "{sv}", actual: "{\(key.signature)\(value.signature)}")
            }
            properties[name] = inner
        }
        return properties
    }

    /// Reads an `a{sa{sv}}`.
    public func asInterfaces() throws(DBusError) -> [String: DBusProperties] {
        guard case .dictionary("s", "a{sv}", let entries) = self else { throw .typeMismatch(expected: "a{sa{sv}}", actual: signature) }
        var interfaces: [String: DBusProperties] = [:]
        for (key, value) in entries {
            guard case .string(let name) = key else { throw .typeMismatch(expected: "s", actual: key.signature) }
            interfaces[name] = try value.asProperties()
        }
        return interfaces
    }

    /// Reads an `a{oa{sa{sv}}}`, as returned by GetManagedObjects.
    public func asManagedObjects() throws(DBusError) -> DBusManagedObjects {
        guard case .dictionary("o", "a{sa{sv}}", let entries) = self else {
            throw .typeMismatch(expected: "a{oa{sa{sv}}}", actual: signature)
        }
        var objects: DBusManagedObjects = [:]
        for (key, value) in entries {
            guard case .objectPath(let path) = key else { throw .typeMismatch(expected: "o", actual: key.signature) }
            objects[path] = try value.asInterfaces()
        }
        return objects
    }
}

/// Optional accessors: nil when the value has another type. Variants are not looked through,
/// except by ``variantContents``, so a caller always knows which layer it is reading.
extension DBusValue {
    public var variantContents: DBusValue? {
        if case .variant(let inner) = self { inner } else { nil }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    public var byteValue: UInt8? {
        if case .byte(let value) = self { value } else { nil }
    }

    public var int16Value: Int16? {
        if case .int16(let value) = self { value } else { nil }
    }

    public var uint16Value: UInt16? {
        if case .uint16(let value) = self { value } else { nil }
    }

    public var int32Value: Int32? {
        if case .int32(let value) = self { value } else { nil }
    }

    public var uint32Value: UInt32? {
        if case .uint32(let value) = self { value } else { nil }
    }

    public var int64Value: Int64? {
        if case .int64(let value) = self { value } else { nil }
    }

    public var uint64Value: UInt64? {
        if case .uint64(let value) = self { value } else { nil }
    }

    public var doubleValue: Double? {
        if case .double(let value) = self { value } else { nil }
    }

    /// The text of a `s`, `o` or `g` value.
    public var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value), .signature(let value): value
        default: nil
        }
    }

    /// The bytes of an `ay`, in either representation.
    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let bytes):
            return bytes
        case .array("y", let elements):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(elements.count)
            for element in elements {
                guard case .byte(let byte) = element else { return nil }
                bytes.append(byte)
            }
            return bytes
        default:
            return nil
        }
    }

    /// The elements' text of an `as`, `ao` or `ag`.
    public var stringArrayValue: [String]? {
        guard case .array(let element, let elements) = self, ["s", "o", "g"].contains(element) else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for value in elements {
            guard let string = value.stringValue else { return nil }
            strings.append(string)
        }
        return strings
    }
}
