import Foundation
import NotifBridgeAccessory
import NotifBridgeFiles
import NotifBridgeHostCore

/// The simulated iPhone's operation files (`phone forward --file`, `policy --sample`): JSON in
/// the shape of `HostOperation`, dates in ISO 8601.
enum OperationFile {
    /// The values of each key that takes one of a fixed set of words.
    private static let words: [String: [String]] = [
        "actions.type": [HostNotification.ActionInput.Kind.dismiss, .background, .textInput].map(\.rawValue),
        "displayDate.kind": [HostNotification.DisplayDateInput.Kind.delivery, .content, .allDay, .hide].map(\.rawValue),
        "notification.attributes": [HostNotification.AttributeInput.timeSensitive, .critical, .priority].map(\.rawValue),
        "alerting.kind": [HostAlerting.Kind.notification, .incomingCall, .timer, .activeCall].map(\.rawValue),
    ]

    /// Decodes the file at `path`, named in errors as `option path`. A key the model would pass
    /// over (`"titel"`) is refused by its place in the file: forwarding a notification without
    /// the title its author meant to give it, and saying nothing, is worse than stopping. The one
    /// key allowed beside the model's is `fixture`, which names the image a file object's base64
    /// was drawn from in the corpus (Fixtures/README.md).
    /// Operation files carry images as base64; this holds dozens at the accessory's limits.
    static let maxFileLength = 16 << 20

    static func read<Value: Codable>(
        _ type: Value.Type, path: String, option: String, limit: Int = maxFileLength, words: [String: [String]] = words
    ) throws -> Value {
        let data: Data
        do { data = try fileContents(path, limit: limit) } catch {
            throw CommandFailure("cannot read \(option) \(path): \(error)")
        }
        let input: Any
        do { input = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) } catch {
            throw CommandFailure("\(option) \(path) is not valid JSON: \(JSONFileErrors.syntax(error))")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let value: Value
        do { value = try decoder.decode(Value.self, from: data) } catch let error as DecodingError {
            throw CommandFailure("\(option) \(path): \(JSONFileErrors.describe(error, words: words))")
        } catch {
            throw CommandFailure("\(option) \(path): \(error)")
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let understood = try JSONSerialization.jsonObject(with: encoder.encode(value))
        if let unknown = JSONFileErrors.firstUnknownKey(in: input, understood: understood, annotations: ["fixture"]) {
            throw CommandFailure("\(option) \(path): unknown key \(unknown), which would be ignored (misspelled, or not used by this operation?)")
        }
        return value
    }
}
