import Foundation

extension ServiceExtension {
    /// What the extension hands to its content handler, read from its standard output: one JSON
    /// object with any of
    ///
    ///     {"title": "…", "subtitle": "…", "body": "…",
    ///      "attachments": [{"type": "public.png", "base64": "…"}]}
    ///
    /// A key left out keeps the original (the extension edits a copy of the content); `""`
    /// removes a text and `[]` the attachments. Any other key is refused by name, so a rewrite
    /// that tries to change the thread or the category fails loudly rather than being ignored.
    public struct Rewrite: Sendable, Hashable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        public var attachments: [HostNotification.FileInput]?

        public init(title: String? = nil, subtitle: String? = nil, body: String? = nil, attachments: [HostNotification.FileInput]? = nil) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.attachments = attachments
        }

        public static func parse(_ output: [UInt8]) throws(Invalid) -> Rewrite {
            guard output.count <= maxOutputLength else {
                throw Invalid("\(output.count) bytes; at most \(maxOutputLength)")
            }
            guard output.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
                throw Invalid("it printed nothing")
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(output)) as? [String: Any] else {
                throw Invalid("it is not a JSON object")
            }
            for key in object.keys.sorted() where !mutableFields.contains(key) {
                throw Invalid("\"\(key.prefix(64))\" cannot be set: a service extension changes only \(mutableFields.joined(separator: ", ")); the identifier, thread, category and interruption level come from the payload")
            }
            var rewrite = Rewrite()
            rewrite.title = try string(object, "title")
            rewrite.subtitle = try string(object, "subtitle")
            rewrite.body = try string(object, "body")
            if let value = object["attachments"] {
                guard let list = value as? [Any] else { throw Invalid("\"attachments\" must be an array") }
                rewrite.attachments = try list.enumerated().map { (index, item) throws(Invalid) in try attachment(item, index: index + 1) }
            }
            return rewrite
        }

        private static func string(_ object: [String: Any], _ key: String) throws(Invalid) -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String else { throw Invalid("\"\(key)\" must be a string (\"\" removes it)") }
            return text
        }

        private static func attachment(_ item: Any, index: Int) throws(Invalid) -> HostNotification.FileInput {
            guard let object = item as? [String: Any] else { throw Invalid("attachment \(index) must be an object with type and base64") }
            for key in object.keys.sorted() where key != "type" && key != "base64" {
                throw Invalid("attachment \(index) has an unknown key \"\(key.prefix(64))\"; it takes type and base64")
            }
            guard let type = object["type"] as? String, !type.isEmpty else {
                throw Invalid("attachment \(index) needs a uniform type, such as \"public.png\"")
            }
            guard let base64 = object["base64"] as? String, let data = Data(base64Encoded: base64), !data.isEmpty else {
                throw Invalid("attachment \(index) needs non-empty base64 data")
            }
            return HostNotification.FileInput(type: type, base64: base64)
        }
    }
}
