import Foundation

/// What is wrong with a JSON file a person wrote (a policy, the simulated iPhone's operations),
/// in the file's own terms: `keywords[0].action: "shout" is not one of alert, mute` rather than
/// Swift's `Index 0`, type names and "Cannot initialize Action from invalid String value".
public enum JSONFileErrors {
    /// Where in the file: `keywords[0].action`, or `[1].notification.title` in a top-level array.
    public static func place(_ path: [any CodingKey]) -> String {
        path.reduce(into: "") { text, key in
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
    }

    /// What JSONSerialization found wrong with the text: the debug description, which says where
    /// ("Invalid value around character 5."), since the localized text on Linux names no place
    /// ("The data couldn’t be read because it isn’t in the correct format.").
    public static func syntax(_ error: any Error) -> String {
        (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
    }

    /// One line for a decoding error. `words` gives the values of keys that take one of a fixed
    /// set of words, to name them when a value is not one of them: by the key and the key of the
    /// object holding it (`hook.on`, `actions.type`; indices left out), or by the key alone where
    /// the object's key is the file's own (a category's name).
    public static func describe(_ error: DecodingError, words: [String: [String]] = [:]) -> String {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return context.debugDescription
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(wrongValue(context, words: words))"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(context.codingPath.isEmpty ? "the top level" : place(context.codingPath)) must be \(kind(of: type))"
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key])) is required"
        @unknown default:
            return "\(error)"
        }
    }

    /// The first key of `input` that the model passed over, as its place in the file.
    ///
    /// Codable ignores keys it does not know, so a misspelled `"titel"` would silently leave a
    /// setting out. `understood` is what the model wrote back when encoded again (both as
    /// `JSONSerialization` objects): the model's own coding keys are the schema, with nothing to
    /// keep in step by hand. A key whose value is null is skipped, since it says nothing, and so
    /// are the `annotations`, keys a file may carry for people and scripts at any depth.
    public static func firstUnknownKey(in input: Any, understood: Any, annotations: Set<String> = [], at place: String = "") -> String? {
        if let object = input as? [String: Any] {
            let known = understood as? [String: Any] ?? [:]
            for key in object.keys.sorted() where !(object[key] is NSNull) && !annotations.contains(key) {
                let here = place.isEmpty ? key : "\(place).\(key)"
                guard let value = known[key] else { return here }
                if let deeper = firstUnknownKey(in: object[key]!, understood: value, annotations: annotations, at: here) { return deeper }
            }
        } else if let array = input as? [Any], let known = understood as? [Any] {
            for (index, element) in array.enumerated() where index < known.count {
                if let deeper = firstUnknownKey(in: element, understood: known[index], annotations: annotations, at: "\(place)[\(index)]") {
                    return deeper
                }
            }
        }
        return nil
    }

    /// A word outside its set reads as the word and the set.
    private static func wrongValue(_ context: DecodingError.Context, words: [String: [String]]) -> String {
        let names = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue)
        guard let allowed = words[names.suffix(2).joined(separator: ".")] ?? names.last.flatMap({ words[$0] }), let range = context.debugDescription.range(of: "from invalid String value ") else {
            return context.debugDescription
        }
        return "\"\(context.debugDescription[range.upperBound...])\" is not one of \(allowed.joined(separator: ", "))"
    }

    /// What a JSON value of this type looks like, for a value of the wrong type.
    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        case is Double.Type, is Float.Type, is any FixedWidthInteger.Type: "a number"
        case is [String: Any].Type: "an object {...}"
        case is any Collection.Type: "a list [...]"
        default: "a value of another kind"
        }
    }
}
