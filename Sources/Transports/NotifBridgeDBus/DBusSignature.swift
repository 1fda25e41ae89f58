/// The D-Bus type grammar, checked in Swift so that a bad signature fails with a message that
/// names it, before sd-bus is involved.
public enum DBusSignature {
    /// The spec's limits: 255 bytes per signature, 32 nested arrays, 32 nested structures.
    static let maxLength = 255
    static let maxArrayDepth = 32
    static let maxStructDepth = 32

    private static let basicCodes = Set("ybnqiuxtdsogh".utf8)

    /// Whether `signature` is a single basic type, as a dictionary key must be.
    public static func isBasic(_ signature: String) -> Bool {
        let bytes = Array(signature.utf8)
        return bytes.count == 1 && basicCodes.contains(bytes[0])
    }

    /// Whether `signature` is exactly one complete type (`s`, `a{sv}`, `(oay)`, ...).
    public static func isSingleCompleteType(_ signature: String) -> Bool {
        completeTypes(in: signature)?.count == 1
    }

    /// Whether `signature` is a valid sequence of complete types, e.g. a message body's.
    public static func isValid(_ signature: String) -> Bool {
        completeTypes(in: signature) != nil
    }

    /// Splits `signature` into its complete types, or nil if it is not valid.
    public static func completeTypes(in signature: String) -> [String]? {
        let bytes = Array(signature.utf8)
        guard bytes.count <= maxLength else { return nil }
        var types: [String] = []
        var index = 0
        while index < bytes.count {
            let start = index
            guard scanCompleteType(bytes, &index, arrayDepth: 0, structDepth: 0) else { return nil }
            types.append(String(decoding: bytes[start..<index], as: UTF8.self))
        }
        return types
    }

    /// Key and value signatures of a dictionary entry type `{kv}`, or nil if it is not one.
    static func dictionaryEntry(_ entry: String) -> (key: String, value: String)? {
        let bytes = Array(entry.utf8)
        guard bytes.count >= 4, bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        let key = String(decoding: bytes[1..<2], as: UTF8.self)
        let value = String(decoding: bytes[2..<(bytes.count - 1)], as: UTF8.self)
        guard isBasic(key), isSingleCompleteType(value) else { return nil }
        return (key, value)
    }

    /// Advances `index` past one complete type; false if none starts there.
    private static func scanCompleteType(_ bytes: [UInt8], _ index: inout Int, arrayDepth: Int, structDepth: Int) -> Bool {
        guard index < bytes.count else { return false }
        let code = bytes[index]
        index += 1
        if basicCodes.contains(code) || code == UInt8(ascii: "v") { return true }
        switch code {
        case UInt8(ascii: "a"):
            guard arrayDepth < maxArrayDepth else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                guard index < bytes.count, basicCodes.contains(bytes[index]) else { return false }
                index += 1
                guard scanCompleteType(bytes, &index, arrayDepth: arrayDepth + 1, structDepth: structDepth + 1) else { return false }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else { return false }
                index += 1
                return true
            }
            return scanCompleteType(bytes, &index, arrayDepth: arrayDepth + 1, structDepth: structDepth)
        case UInt8(ascii: "("):
            guard structDepth < maxStructDepth else { return false }
            var fields = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                guard scanCompleteType(bytes, &index, arrayDepth: arrayDepth, structDepth: structDepth + 1) else { return false }
                fields += 1
            }
            guard index < bytes.count, fields > 0 else { return false }
            index += 1
            return true
        default:
            return false
        }
    }
}

/// Names and paths as the spec defines them. sd-bus checks most of these itself, but not error
/// names, and a reply with an invalid one makes dbus-daemon drop the whole connection.
public enum DBusNames {
    /// `/` or `/a/b_c/d1`: non-empty `[A-Za-z0-9_]` elements, no trailing slash.
    public static func isValidObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst().allSatisfy { element in
            !element.isEmpty && element.allSatisfy(isNameByte)
        }
    }

    /// Interface and error names: two or more dot-separated elements, none starting with a digit.
    public static func isValidInterfaceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return elements.count >= 2 && elements.allSatisfy(isElement)
    }

    /// Method and signal names: one element.
    public static func isValidMemberName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count <= 255 && isElement(bytes[...])
    }

    private static func isElement(_ element: ArraySlice<UInt8>) -> Bool {
        guard let first = element.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return element.allSatisfy(isNameByte)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
