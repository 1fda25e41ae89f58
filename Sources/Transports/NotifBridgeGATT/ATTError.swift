/// ATT error codes the peripheral answers writes with (Bluetooth Core Spec Vol 3 Part F
/// §3.4.1.1). CoreBluetooth's `CBATTError.Code` uses the same raw values, so the Mac adapter
/// converts with `CBATTError.Code(rawValue:)`; BlueZ names the same refusals by D-Bus error.
public struct ATTError: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The characteristic cannot be read (NotifBridge characteristics are write or notify only).
    public static let readNotPermitted = ATTError(rawValue: 0x02)
    /// A write to anything but the inbox, or from a second central while the link lasts.
    public static let writeNotPermitted = ATTError(rawValue: 0x03)
    /// A long (prepared) write: PROTOCOL.md §2.1 refuses them with NotSupported.
    public static let requestNotSupported = ATTError(rawValue: 0x06)
    /// A value over the 512 bytes an attribute may hold.
    public static let invalidAttributeValueLength = ATTError(rawValue: 0x0D)
    /// Too many writes wait unread: BlueZ answers InProgress, which ATT does not have.
    public static let insufficientResources = ATTError(rawValue: 0x11)

    public var description: String {
        switch self {
        case .readNotPermitted: "read not permitted"
        case .writeNotPermitted: "write not permitted"
        case .requestNotSupported: "request not supported"
        case .invalidAttributeValueLength: "invalid attribute value length"
        case .insufficientResources: "insufficient resources"
        default: "ATT error 0x\(String(rawValue, radix: 16))"
        }
    }
}
