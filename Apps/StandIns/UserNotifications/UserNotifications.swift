// Stand-in for Apple's UserNotifications: only what Apps/ uses, each citing its page under
// https://developer.apple.com/documentation/usernotifications/. Never shipped.
import Foundation

/// …/unusernotificationcenter (Sendable in the SDK's Swift interface)
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    /// …/unusernotificationcenter/current()
    open class func current() -> UNUserNotificationCenter { UNUserNotificationCenter() }
    /// …/unusernotificationcenter/delegate
    open weak var delegate: (any UNUserNotificationCenterDelegate)?
    /// …/unusernotificationcenter/requestauthorization(options:completionhandler:) (async form)
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool { true }
    /// …/unusernotificationcenter/add(_:withcompletionhandler:) (async form)
    open func add(_ request: UNNotificationRequest) async throws {}
    /// …/unusernotificationcenter/setnotificationcategories(_:)
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {}
    /// …/unusernotificationcenter/removedeliverednotifications(withidentifiers:)
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {}
}

/// …/unusernotificationcenterdelegate (optional on Apple's side; see CoreBluetooth's note)
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    /// …/unusernotificationcenterdelegate/usernotificationcenter(_:didreceive:withcompletionhandler:) (async form)
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async
    /// …/unusernotificationcenterdelegate/usernotificationcenter(_:willpresent:withcompletionhandler:) (async form)
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions
}

/// …/unauthorizationoptions
public struct UNAuthorizationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// …/unauthorizationoptions/sound
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    /// …/unauthorizationoptions/alert
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
}

/// …/unnotificationpresentationoptions
public struct UNNotificationPresentationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// …/unnotificationpresentationoptions/sound
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    /// …/unnotificationpresentationoptions/list
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    /// …/unnotificationpresentationoptions/banner
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// …/unnotificationcontent
open class UNNotificationContent: NSObject, @unchecked Sendable {}

/// …/unmutablenotificationcontent
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    /// …/unmutablenotificationcontent/title
    open var title = ""
    /// …/unmutablenotificationcontent/subtitle
    open var subtitle = ""
    /// …/unmutablenotificationcontent/body
    open var body = ""
    /// …/unmutablenotificationcontent/threadidentifier
    open var threadIdentifier = ""
    /// …/unmutablenotificationcontent/categoryidentifier
    open var categoryIdentifier = ""
    /// …/unmutablenotificationcontent/sound
    open var sound: UNNotificationSound?
}

/// …/unnotificationsound
open class UNNotificationSound: NSObject, @unchecked Sendable {
    /// …/unnotificationsound/default
    open class var `default`: UNNotificationSound { UNNotificationSound() }
}

/// …/unnotificationtrigger
open class UNNotificationTrigger: NSObject, @unchecked Sendable {}

/// …/unnotificationrequest
open class UNNotificationRequest: NSObject, @unchecked Sendable {
    /// …/unnotificationrequest/init(identifier:content:trigger:)
    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) { self.identifier = identifier }
    /// …/unnotificationrequest/identifier
    public let identifier: String
}

/// …/unnotification
open class UNNotification: NSObject, @unchecked Sendable {
    /// …/unnotification/request
    open var request: UNNotificationRequest { UNNotificationRequest(identifier: "", content: UNNotificationContent(), trigger: nil) }
}

/// …/unnotificationresponse
open class UNNotificationResponse: NSObject, @unchecked Sendable {
    /// …/unnotificationresponse/notification
    open var notification: UNNotification { UNNotification() }
    /// …/unnotificationresponse/actionidentifier
    open var actionIdentifier: String { "" }
}

/// …/untextinputnotificationresponse
open class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    /// …/untextinputnotificationresponse/usertext
    open var userText: String { "" }
}

/// …/unnotificationdefaultactionidentifier
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
/// …/unnotificationdismissactionidentifier
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

/// …/unnotificationactionoptions
public struct UNNotificationActionOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
}

/// …/unnotificationaction
open class UNNotificationAction: NSObject, @unchecked Sendable {
    /// …/unnotificationaction/init(identifier:title:options:)
    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) {}
}

/// …/untextinputnotificationaction
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    /// …/untextinputnotificationaction/init(identifier:title:options:textinputbuttontitle:textinputplaceholder:)
    public init(identifier: String, title: String, options: UNNotificationActionOptions = [], textInputButtonTitle: String, textInputPlaceholder: String) {
        super.init(identifier: identifier, title: title, options: options)
    }
}

/// …/unnotificationcategoryoptions
public struct UNNotificationCategoryOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// …/unnotificationcategoryoptions/customdismissaction
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
}

/// …/unnotificationcategory
open class UNNotificationCategory: NSObject, @unchecked Sendable {
    /// …/unnotificationcategory/init(identifier:actions:intentidentifiers:options:)
    public init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String], options: UNNotificationCategoryOptions = []) {}
}
