/// Why bytes from a peer were refused. Carries no payload bytes, so it is safe to log.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A chunk or frame whose header does not parse.
        case malformedChunk
        /// A declared or actual length over a named limit.
        case tooLarge
        /// More partial messages, or more reserved bytes, than the limits allow.
        case tooManyPartialMessages
        /// A continuation chunk for a message id with nothing in flight.
        case unknownMessageID
        /// A message whose chunks add up to more or less than its declared length.
        case lengthMismatch
        /// Bytes that are not a valid protobuf message of the expected type.
        case malformedMessage
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}

extension WireError {
    /// Errors compare by code only, so callers and tests match on what went wrong, not on wording.
    public static func == (lhs: WireError, rhs: WireError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
