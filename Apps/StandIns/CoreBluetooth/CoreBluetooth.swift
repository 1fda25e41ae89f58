// Stand-in for Apple's CoreBluetooth: only what Apps/ uses, each declaration citing its page
// under https://developer.apple.com/documentation/corebluetooth/. Never shipped.
//
// Delegate methods that are optional on Apple's side (`@objc optional`) are requirements here:
// Linux has no Objective-C optional requirements, and a requirement makes a misspelt
// implementation in an adapter fail the type-check instead of being silently never called.
import Foundation

/// …/cbmanagerstate
public enum CBManagerState: Int, Sendable {
    case unknown, resetting, unsupported, unauthorized, poweredOff, poweredOn
}

/// …/cbmanager
open class CBManager: NSObject {
    /// …/cbmanager/state
    open var state: CBManagerState { .unknown }
}

/// …/cbuuid
open class CBUUID: NSObject, @unchecked Sendable {
    /// …/cbuuid/init(string:)
    public init(string theString: String) { uuidString = theString }
    /// …/cbuuid/uuidstring
    public let uuidString: String
}

/// …/cbpeer
open class CBPeer: NSObject {
    /// …/cbpeer/identifier
    open var identifier: UUID { UUID() }
}

/// …/cbcentral
open class CBCentral: CBPeer {
    /// …/cbcentral/maximumupdatevaluelength
    open var maximumUpdateValueLength: Int { 20 }
}

/// …/cbattribute
open class CBAttribute: NSObject {
    /// …/cbattribute/uuid
    open var uuid: CBUUID { CBUUID(string: "") }
}

/// …/cbservice
open class CBService: CBAttribute {
    /// …/cbservice/characteristics
    open var characteristics: [CBCharacteristic]? { nil }
}

/// …/cbmutableservice
open class CBMutableService: CBService {
    /// …/cbmutableservice/init(type:primary:)
    public init(type UUID: CBUUID, primary isPrimary: Bool) {}
    /// …/cbmutableservice/characteristics (read-write here)
    open override var characteristics: [CBCharacteristic]? {
        get { nil }
        set {}
    }
}

/// …/cbcharacteristic
open class CBCharacteristic: CBAttribute {
    /// …/cbcharacteristic/value
    open var value: Data? { nil }
    /// …/cbcharacteristic/isnotifying
    open var isNotifying: Bool { false }
}

/// …/cbmutablecharacteristic
open class CBMutableCharacteristic: CBCharacteristic {
    /// …/cbmutablecharacteristic/init(type:properties:value:permissions:)
    public init(type UUID: CBUUID, properties: CBCharacteristicProperties, value: Data?, permissions: CBAttributePermissions) {}
}

/// …/cbcharacteristicproperties
public struct CBCharacteristicProperties: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// …/cbcharacteristicproperties/writewithoutresponse
    public static let writeWithoutResponse = CBCharacteristicProperties(rawValue: 0x04)
    /// …/cbcharacteristicproperties/write
    public static let write = CBCharacteristicProperties(rawValue: 0x08)
    /// …/cbcharacteristicproperties/notify
    public static let notify = CBCharacteristicProperties(rawValue: 0x10)
}

/// …/cbattributepermissions
public struct CBAttributePermissions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// …/cbattributepermissions/readable
    public static let readable = CBAttributePermissions(rawValue: 0x01)
    /// …/cbattributepermissions/writeable
    public static let writeable = CBAttributePermissions(rawValue: 0x02)
}

/// …/cbcharacteristicwritetype
public enum CBCharacteristicWriteType: Int, Sendable {
    case withResponse, withoutResponse
}

/// …/cbatterror
public struct CBATTError: Error {
    /// …/cbatterror/code (raw values are the ATT error codes, Core Spec Vol 3 Part F §3.4.1.1)
    public enum Code: Int, Sendable {
        case success = 0x00
        case invalidHandle = 0x01
        case readNotPermitted = 0x02
        case writeNotPermitted = 0x03
        case invalidPdu = 0x04
        case insufficientAuthentication = 0x05
        case requestNotSupported = 0x06
        case invalidOffset = 0x07
        case insufficientAuthorization = 0x08
        case prepareQueueFull = 0x09
        case attributeNotFound = 0x0A
        case attributeNotLong = 0x0B
        case insufficientEncryptionKeySize = 0x0C
        case invalidAttributeValueLength = 0x0D
        case unlikelyError = 0x0E
        case insufficientEncryption = 0x0F
        case unsupportedGroupType = 0x10
        case insufficientResources = 0x11
    }
}

/// …/cbattrequest
open class CBATTRequest: NSObject {
    /// …/cbattrequest/central
    open var central: CBCentral { CBCentral() }
    /// …/cbattrequest/characteristic
    open var characteristic: CBCharacteristic { CBCharacteristic() }
    /// …/cbattrequest/offset
    open var offset: Int { 0 }
    /// …/cbattrequest/value
    open var value: Data?
}

/// …/cbcentralmanager
open class CBCentralManager: CBManager {
    /// …/cbcentralmanager/init(delegate:queue:options:)
    public init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {}
    /// …/cbcentralmanager/retrieveperipherals(withidentifiers:)
    open func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBPeripheral] { [] }
    /// …/cbcentralmanager/connect(_:options:)
    open func connect(_ peripheral: CBPeripheral, options: [String: Any]? = nil) {}
    /// …/cbcentralmanager/cancelperipheralconnection(_:)
    open func cancelPeripheralConnection(_ peripheral: CBPeripheral) {}
}

/// …/cbcentralmanageroptionrestoreidentifierkey
public let CBCentralManagerOptionRestoreIdentifierKey = "kCBRestoreIdentifierKey"

/// …/cbcentralmanagerdelegate
public protocol CBCentralManagerDelegate: NSObjectProtocol {
    /// …/cbcentralmanagerdelegate/centralmanagerdidupdatestate(_:)
    func centralManagerDidUpdateState(_ central: CBCentralManager)
    /// …/cbcentralmanagerdelegate/centralmanager(_:willrestorestate:)
    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any])
    /// …/cbcentralmanagerdelegate/centralmanager(_:didconnect:)
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral)
    /// …/cbcentralmanagerdelegate/centralmanager(_:didfailtoconnect:error:)
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
    /// …/cbcentralmanagerdelegate/centralmanager(_:diddisconnectperipheral:error:)
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?)
}

/// …/cbperipheral
open class CBPeripheral: CBPeer {
    /// …/cbperipheral/delegate
    open weak var delegate: (any CBPeripheralDelegate)?
    /// …/cbperipheral/services
    open var services: [CBService]? { nil }
    /// …/cbperipheral/discoverservices(_:)
    open func discoverServices(_ serviceUUIDs: [CBUUID]?) {}
    /// …/cbperipheral/discovercharacteristics(_:for:)
    open func discoverCharacteristics(_ characteristicUUIDs: [CBUUID]?, for service: CBService) {}
    /// …/cbperipheral/setnotifyvalue(_:for:)
    open func setNotifyValue(_ enabled: Bool, for characteristic: CBCharacteristic) {}
    /// …/cbperipheral/writevalue(_:for:type:)
    open func writeValue(_ data: Data, for characteristic: CBCharacteristic, type: CBCharacteristicWriteType) {}
    /// …/cbperipheral/maximumwritevaluelength(for:)
    open func maximumWriteValueLength(for type: CBCharacteristicWriteType) -> Int { 20 }
}

/// …/cbperipheraldelegate
public protocol CBPeripheralDelegate: NSObjectProtocol {
    /// …/cbperipheraldelegate/peripheral(_:diddiscoverservices:)
    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?)
    /// …/cbperipheraldelegate/peripheral(_:diddiscovercharacteristicsfor:error:)
    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?)
    /// …/cbperipheraldelegate/peripheral(_:didupdatenotificationstatefor:error:)
    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?)
    /// …/cbperipheraldelegate/peripheral(_:didupdatevaluefor:error:)
    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?)
    /// …/cbperipheraldelegate/peripheral(_:didwritevaluefor:error:)
    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?)
}

/// …/cbperipheralmanager
open class CBPeripheralManager: CBManager {
    /// …/cbperipheralmanager/init(delegate:queue:)
    public init(delegate: (any CBPeripheralManagerDelegate)?, queue: DispatchQueue?) {}
    /// …/cbperipheralmanager/add(_:)
    open func add(_ service: CBMutableService) {}
    /// …/cbperipheralmanager/startadvertising(_:)
    open func startAdvertising(_ advertisementData: [String: Any]?) {}
    /// …/cbperipheralmanager/respond(to:withresult:)
    open func respond(to request: CBATTRequest, withResult result: CBATTError.Code) {}
    /// …/cbperipheralmanager/updatevalue(_:for:onsubscribedcentrals:)
    open func updateValue(_ value: Data, for characteristic: CBMutableCharacteristic, onSubscribedCentrals centrals: [CBCentral]?) -> Bool { true }
}

/// …/cbadvertisementdataserviceuuidskey
public let CBAdvertisementDataServiceUUIDsKey = "kCBAdvDataServiceUUIDs"
/// …/cbadvertisementdatalocalnamekey
public let CBAdvertisementDataLocalNameKey = "kCBAdvDataLocalName"

/// …/cbperipheralmanagerdelegate
public protocol CBPeripheralManagerDelegate: NSObjectProtocol {
    /// …/cbperipheralmanagerdelegate/peripheralmanagerdidupdatestate(_:)
    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager)
    /// …/cbperipheralmanagerdelegate/peripheralmanager(_:didadd:error:)
    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?)
    /// …/cbperipheralmanagerdelegate/peripheralmanager(_:didreceivewrite:)
    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest])
    /// …/cbperipheralmanagerdelegate/peripheralmanager(_:didreceiveread:)
    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest)
    /// …/cbperipheralmanagerdelegate/peripheralmanager(_:central:didsubscribeto:)
    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic)
    /// …/cbperipheralmanagerdelegate/peripheralmanager(_:central:didunsubscribefrom:)
    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic)
    /// …/cbperipheralmanagerdelegate/peripheralmanagerisready(toupdatesubscribers:)
    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager)
}
