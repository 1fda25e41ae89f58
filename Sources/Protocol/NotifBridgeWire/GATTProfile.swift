/// The GATT service the accessory hosts (docs/PROTOCOL.md §2).
///
/// The iOS companion app declares `serviceUUID` in `NSAccessorySetupBluetoothServices` and
/// `advertisedName` in `NSAccessorySetupBluetoothNames`, so AccessorySetupKit finds the accessory.
public enum GATTProfile {
    /// Primary service, advertised.
    public static let serviceUUID = "495C5451-53CC-4E2F-9850-060623FCB426"
    /// Host → accessory chunks: write and write-without-response.
    public static let inboxCharacteristicUUID = "495C5452-53CC-4E2F-9850-060623FCB426"
    /// Accessory → host chunks: notify.
    public static let outboxCharacteristicUUID = "495C5453-53CC-4E2F-9850-060623FCB426"
    /// Advertised local name (a prefix; an accessory may append a suffix such as "-A1B2").
    public static let advertisedName = "NotifBridge"
    /// Longest local name; legacy advertising data has 31 bytes, most taken by the 128-bit UUID,
    /// so BlueZ shortens or moves longer names.
    public static let maxAdvertisedNameLength = 29
    /// The ATT write and notification header: opcode (1) and handle (2).
    public static let attHeaderLength = 3

    /// The longest chunk on Bluetooth LE. An attribute value may have 512 bytes, but BlueZ
    /// before 5.69 counts the 2-byte handle against that limit and drops 511- and 512-byte
    /// writes without answering (bluez/bluez#570; Debian 12 ships 5.66).
    public static let maxChunkLength = WireLimits.maxAttributeValueLength - 2

    /// The chunk length a link with this ATT MTU carries.
    public static func chunkLength(forATTMTU mtu: Int) -> Int {
        min(max(mtu - attHeaderLength, WireLimits.minChunkLength), maxChunkLength)
    }
}

extension GATTProfile {
    /// The chunk length for a link whose stack reports the longest value one ATT write or
    /// notification carries, as CoreBluetooth does (`maximumWriteValueLength(for:
    /// .withoutResponse)`, `CBCentral.maximumUpdateValueLength`): ATT_MTU − 3 already.
    public static func chunkLength(forMaximumValueLength length: Int) -> Int {
        chunkLength(forATTMTU: length + attHeaderLength)
    }
}
