import Foundation
import SwiftProtobuf

/// A protobuf message's proto3 JSON (field names as in the .proto), kept as a JSON value so that
/// a vector file shows it nested and readable rather than as one escaped string. It lets a
/// firmware writer check every decoded field, not only the bytes: a decoder that reads a
/// `sint64` as `int64` still passes a byte-for-byte comparison of re-encoded plaintexts.
public indirect enum DecodedJSON: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([DecodedJSON])
    case object([String: DecodedJSON])

    /// `message` in proto3 JSON: 64-bit integers as strings, bytes as base64, enums by name,
    /// fields at their default value left out.
    public init(_ message: some SwiftProtobuf.Message) throws {
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        self = try JSONDecoder().decode(DecodedJSON.self, from: Data(message.jsonString(options: options).utf8))
    }

    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([DecodedJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: DecodedJSON].self))
        }
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
