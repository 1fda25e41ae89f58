// Stand-in for Apple's AccessorySetupKit: only what Apps/ uses, each declaration citing its page
// under https://developer.apple.com/documentation/accessorysetupkit/. Never shipped.
import CoreBluetooth
import Foundation
import UIKit

/// …/asaccessorysession
open class ASAccessorySession: NSObject {
    public override init() {}
    /// …/asaccessorysession/accessories
    open var accessories: [ASAccessory] { [] }
    /// …/asaccessorysession/activate(on:eventhandler:)
    open func activate(on queue: DispatchQueue, eventHandler: @escaping (ASAccessoryEvent) -> Void) {}
    /// …/asaccessorysession/showpicker(for:completionhandler:)
    open func showPicker(for displayItems: [ASPickerDisplayItem], completionHandler: @escaping ((any Error)?) -> Void) {}
}

/// …/asaccessoryevent
open class ASAccessoryEvent: NSObject {
    /// …/asaccessoryevent/eventtype
    open var eventType: ASAccessoryEventType { .unknown }
    /// …/asaccessoryevent/accessory
    open var accessory: ASAccessory? { nil }
}

/// …/asaccessoryeventtype (the cases Apps/ names; the SDK's raw values are not reproduced)
public enum ASAccessoryEventType: Int, Sendable {
    case unknown, activated, invalidated, migrationComplete, accessoryAdded, accessoryRemoved, accessoryChanged, pickerDidPresent, pickerDidDismiss
}

/// …/asaccessory
open class ASAccessory: NSObject {
    /// …/asaccessory/accessorystate
    public enum AccessoryState: Int, Sendable {
        case unauthorized, awaitingAuthorization, authorized
    }

    /// …/asaccessory/displayname
    open var displayName: String { "" }
    /// …/asaccessory/state
    open var state: AccessoryState { .unauthorized }
    /// …/asaccessory/bluetoothidentifier
    open var bluetoothIdentifier: UUID? { nil }
}

/// …/aspickerdisplayitem
open class ASPickerDisplayItem: NSObject {
    /// …/aspickerdisplayitem/init(name:productimage:descriptor:)
    public init(name: String, productImage: UIImage, descriptor: ASDiscoveryDescriptor) {}
}

/// …/asdiscoverydescriptor
open class ASDiscoveryDescriptor: NSObject {
    public override init() {}
    /// …/asdiscoverydescriptor/bluetoothserviceuuid
    open var bluetoothServiceUUID: CBUUID?
    /// …/asdiscoverydescriptor/bluetoothnamesubstring
    open var bluetoothNameSubstring: String?
}
