// Stand-in for Apple's AccessoryTransportExtension (iOS 26.5): only what Apps/ uses, each
// declaration citing its page under https://developer.apple.com/documentation/accessorytransportextension/
// (the T-keys of ../shared/reference/apple-api.md §12) or the working project file it was
// taken from. Never shipped.
import ExtensionFoundation
import Foundation

// MARK: Extension points

/// …/accessorydataprovider (`AccessoryDataProvider : AppExtension, Sendable`). The requirement's
/// shape is the call site in Apple's article "Receiving iOS notifications on an accessory" and
/// zunda-pixel/pebble-app NotificationProvider: `var extensionPoint: AppExtensionPoint { … }`.
public protocol AccessoryDataProvider: AppExtension, Sendable {
    @AppExtensionPoint.Bind var extensionPoint: AppExtensionPoint { get }
}

/// …/accessorytransportsecurity; requirement …/accessorytransportsecurity/accept(sessionrequest:).
/// `boundExtensionPoint`: the article's sample.
public protocol AccessoryTransportSecurity: AppExtension {
    @AppExtensionPoint.Bind static var boundExtensionPoint: AppExtensionPoint { get }
    func accept(sessionRequest: AccessorySecuritySession.Request) -> AccessorySecuritySession.Request.Decision
}

/// …/accessorytransportappextension; requirement …/accessorytransportappextension/accept(sessionrequest:).
public protocol AccessoryTransportAppExtension: AppExtension {
    @AppExtensionPoint.Bind static var boundExtensionPoint: AppExtensionPoint { get }
    func accept(sessionRequest: AccessoryTransportSession.Request) -> AccessoryTransportSession.Request.Decision
}

// MARK: Messages

/// …/accessorytransport (`.bluetooth`, `.localNetwork`, `.internet`)
public enum AccessoryTransport: Sendable, Hashable {
    case bluetooth, localNetwork, internet
}

/// …/transportmessage
public struct TransportMessage: Sendable {
    /// …/transportmessage/init(sessionid:data:)
    public init(sessionID: UUID, data: Data) {
        self.sessionID = sessionID
        self.data = data
    }
    /// …/transportmessage/sessionid
    public let sessionID: UUID
    /// …/transportmessage/data
    public let data: Data
}

/// …/accessorymessage
public struct AccessoryMessage: Sendable {
    /// …/accessorymessage/payloads
    public let payloads: [Payload]

    /// …/accessorymessage/init(_:)
    public init(@Builder _ builder: () -> AccessoryMessage) { self = builder() }
    init(payloads: [Payload]) { self.payloads = payloads }

    /// …/accessorymessage/payload
    public struct Payload: Sendable {
        /// …/accessorymessage/payload/init(transport:data:)
        public init(transport: AccessoryTransport = .bluetooth, data: Data) {
            self.transport = transport
            self.data = data
        }
        /// …/accessorymessage/payload/transport
        public let transport: AccessoryTransport
        /// …/accessorymessage/payload/data
        public let data: Data
    }

    /// …/accessorymessage/builder (`buildBlock`, `buildExpression(Payload)`; the intermediate
    /// type is not documented).
    @resultBuilder
    public struct Builder {
        public static func buildExpression(_ payload: Payload) -> [Payload] { [payload] }
        public static func buildBlock(_ parts: [Payload]...) -> [Payload] { parts.flatMap { $0 } }
        public static func buildFinalResult(_ payloads: [Payload]) -> AccessoryMessage { AccessoryMessage(payloads: payloads) }
    }

    /// …/accessorymessage/result (`.success`, `.failure(_:)`)
    public enum Result: Sendable {
        case success
        case failure(AccessoryMessage.Error)
    }

    /// …/accessorymessage/error (…/error/transportfailed, …/error/transportunavailable)
    public enum Error: Swift.Error, Hashable, Sendable {
        case transportFailed
        case transportUnavailable
    }
}

// MARK: Security

/// …/securitymessage
public struct SecurityMessage: Sendable, CustomStringConvertible {
    /// …/securitymessage/keytype-swift.enum
    public enum KeyType: Sendable {
        case publicKey, encapsulatedKey
    }

    /// …/securitymessage/ciphersuite-swift.enum (…/xwing, …/p256). Its description is what
    /// goes into HPKE `info`: observed "XWing" / "P256" (shinvou/NotifBridge README).
    public enum CipherSuite: Sendable, CustomStringConvertible {
        case xWing, p256

        /// …/securitymessage/ciphersuite-swift.enum/version (…/version/version1; observed "Version1")
        public enum Version: Sendable, CustomStringConvertible {
            case version1
            public var description: String { "Version1" }
        }

        public var description: String {
            switch self {
            case .xWing: "XWing"
            case .p256: "P256"
            }
        }
    }

    /// …/securitymessage/init(keytype:ciphersuite:version:key:supportedtransports:identifier:)
    public init(keyType: KeyType, cipherSuite: CipherSuite, version: CipherSuite.Version, key: Data, supportedTransports: [AccessoryTransport] = [.bluetooth], identifier: String? = nil) {
        self.keyType = keyType
        self.cipherSuite = cipherSuite
        self.version = version
        self.key = key
        self.supportedTransports = supportedTransports
        self.identifier = identifier
    }

    /// …/securitymessage/keytype-swift.property
    public let keyType: KeyType
    /// …/securitymessage/ciphersuite-swift.property
    public let cipherSuite: CipherSuite
    /// …/securitymessage/version
    public let version: CipherSuite.Version
    /// …/securitymessage/key
    public let key: Data
    /// …/securitymessage/supportedtransports
    public let supportedTransports: [AccessoryTransport]
    /// …/securitymessage/identifier
    public let identifier: String?

    public var description: String { "SecurityMessage(\(keyType), \(cipherSuite))" }
}

/// …/accessorysecuritysession
open class AccessorySecuritySession: CustomStringConvertible {
    public var description: String { "AccessorySecuritySession" }

    /// …/accessorysecuritysession/sendsecuritymessage(_:)
    open func sendSecurityMessage(_ message: SecurityMessage) throws(AccessorySecuritySession.Error) {}
    /// …/accessorysecuritysession/cancel(error:) (shinvou/NotifBridge passes `.unknown`)
    open func cancel(error: AccessorySecuritySession.Error?) {}

    /// …/accessorysecuritysession/error (`.invalidated`, `.unknown`, `.unsupported`)
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        case invalidated, unknown, unsupported
        public var description: String { "\(self)" }
    }

    /// …/accessorysecuritysession/request
    public final class Request {
        /// …/accessorysecuritysession/request/session
        public let session: AccessorySecuritySession
        init(session: AccessorySecuritySession) { self.session = session }

        /// …/accessorysecuritysession/request/decision
        public struct Decision {}

        /// …/accessorysecuritysession/request/accept(_:)
        public func accept<Handler: EventHandler>(_ makeHandler: () -> Handler) -> Decision { Decision() }
        /// …/accessorysecuritysession/request/reject(error:)
        public func reject(error: AccessorySecuritySession.Error?) -> Decision { Decision() }
    }

    /// …/accessorysecuritysession/eventhandler
    public protocol EventHandler: AnyObject {
        /// …/eventhandler/messagereceived(_:completion:)
        func messageReceived(_ message: SecurityMessage, completion: @escaping @Sendable (AccessoryMessage.Result) -> Void)
        /// …/eventhandler/sessioninvalidated(error:) (`AccessorySecuritySession.Error?` as in
        /// shinvou/NotifBridge ios/TransportSecurityExtension/SecurityEventHandler.swift)
        func sessionInvalidated(error: AccessorySecuritySession.Error?)
    }
}

// MARK: Transport

/// …/accessorytransportsession
open class AccessoryTransportSession: CustomStringConvertible {
    public var description: String { "AccessoryTransportSession" }

    /// …/accessorytransportsession/transport
    open var transport: AccessoryTransport?
    /// …/accessorytransportsession/transportstaterestoreidentifier
    open var transportStateRestoreIdentifier: String? { nil }
    /// …/accessorytransportsession/sendmessagetodataprovider(_:)
    open func sendMessageToDataProvider(_ message: TransportMessage) throws(AccessoryTransportSession.Error) {}
    /// …/accessorytransportsession/cancel(error:)
    open func cancel(error: AccessoryTransportSession.Error?) {}

    /// …/accessorytransportsession/error (`.invalidated`, `.unsupported`, `.unknown`)
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        case invalidated, unsupported, unknown
        public var description: String { "\(self)" }
    }

    /// …/accessorytransportsession/request
    public final class Request {
        /// …/accessorytransportsession/request/session
        public let session: AccessoryTransportSession
        init(session: AccessoryTransportSession) { self.session = session }

        /// …/accessorytransportsession/request/decision
        public struct Decision {}

        /// …/accessorytransportsession/request/accept(_:)
        public func accept<Handler: EventHandler>(_ makeHandler: () -> Handler) -> Decision { Decision() }
        /// …/accessorytransportsession/request/reject(error:)
        public func reject(error: AccessoryTransportSession.Error?) -> Decision { Decision() }
    }

    /// …/accessorytransportsession/eventhandler
    public protocol EventHandler: AnyObject {
        /// …/eventhandler/messagereceived(_:completion:)
        func messageReceived(_ message: TransportMessage, completion: @escaping @Sendable (AccessoryMessage.Result) -> Void)
        /// …/eventhandler/sessioninvalidated(error:) (`AccessoryTransportSession.Error?` as in
        /// shinvou/NotifBridge ios/TransportAppExtension/TransportEventHandler.swift)
        func sessionInvalidated(error: AccessoryTransportSession.Error?)
    }
}
