/// Why ANCS bytes were refused. Carries no notification content, so it is safe to log.
public struct ANCSError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Control Point: a CommandID the phone does not know (ATT error 0xA0).
        case unknownCommand
        /// Control Point: a request that does not parse (ATT error 0xA1).
        case invalidCommand
        /// Control Point: a parameter naming nothing on the phone, e.g. an unknown UID (0xA2).
        case invalidParameter
        /// Control Point: the phone could not perform the action (0xA3).
        case actionFailed
        /// Notification Source or Data Source bytes that do not parse.
        case malformed
        /// A length over a named limit.
        case tooLarge
        /// A Data Source reply that is not for the request in flight.
        case unexpectedReply
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The ATT error code the ANCS specification assigns, for the errors a phone answers a
    /// Control Point write with; nil for the accessory's own parse errors.
    public var attErrorCode: UInt8? {
        switch code {
        case .unknownCommand: 0xA0
        case .invalidCommand: 0xA1
        case .invalidParameter: 0xA2
        case .actionFailed: 0xA3
        case .malformed, .tooLarge, .unexpectedReply: nil
        }
    }

    /// The error for an ATT error code a Control Point write failed with, if ANCS defines it.
    public init?(attErrorCode: UInt8, detail: String = "") {
        guard let code = Code.allCases.first(where: { ANCSError($0, "").attErrorCode == attErrorCode }) else { return nil }
        self.init(code, detail)
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}

extension ANCSError {
    /// Errors compare by code only, so callers and tests match on what went wrong, not on wording.
    public static func == (lhs: ANCSError, rhs: ANCSError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
