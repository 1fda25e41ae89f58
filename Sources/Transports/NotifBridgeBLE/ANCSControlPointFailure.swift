import NotifBridgeDBus

/// A Control Point write the iPhone (or bluetoothd) refused. bluetoothd reports an ATT error
/// response as `org.bluez.Error.Failed` "Operation failed with ATT error: 0xNN" (or as a named
/// error for the standard codes it knows), so both are kept for the log.
public struct ControlPointFailure: Error, CustomStringConvertible, Sendable {
    public let device: String
    /// BlueZ's error name, e.g. `org.bluez.Error.Failed`; nil if the bus itself failed.
    public let errorName: String?
    /// The ATT error code, when bluetoothd's message names one.
    public let attError: UInt8?
    public let description: String

    init(device: String, error: DBusError) {
        self.device = device
        if case .errorReply(let name, let message) = error {
            errorName = name
            attError = Self.attError(in: message)
        } else {
            errorName = nil
            attError = nil
        }
        let code = attError.map { " (ATT error 0x\(String($0, radix: 16, uppercase: true)))" } ?? ""
        description = "Control Point write to \(BlueZ.address(of: device)) failed\(code): \(error)"
    }

    /// `0x80` from "Operation failed with ATT error: 0x80".
    static func attError(in message: String) -> UInt8? {
        guard let range = message.firstRange(of: "ATT error: 0x") else { return nil }
        let digits = message[range.upperBound...].prefix { $0.isHexDigit }
        guard digits.count == 2 else { return nil }
        return UInt8(digits, radix: 16)
    }
}
