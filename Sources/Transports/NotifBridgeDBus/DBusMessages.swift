import CSystemdBus

/// A method call received on an exported object, decoded on the bus thread.
public struct MethodCall: Sendable {
    public var path: String
    /// Absent when the caller did not name one; D-Bus allows that for unambiguous members.
    public var interface: String?
    public var member: String
    /// The caller's unique bus name, e.g. `:1.42`.
    public var sender: String?
    public var arguments: [DBusValue]
    /// Where a handler that returned ``MethodReply/deferred`` sends its answer; nil for calls
    /// not received from a bus (tests).
    public var deferredReply: DeferredReply?

    public init(path: String, interface: String?, member: String, sender: String? = nil, arguments: [DBusValue] = [], deferredReply: DeferredReply? = nil) {
        self.path = path
        self.interface = interface
        self.member = member
        self.sender = sender
        self.arguments = arguments
        self.deferredReply = deferredReply
    }

    /// The signature of the arguments, e.g. `aya{sv}` for a GATT WriteValue.
    public var signature: String { DBusValue.signature(of: arguments) }

    /// The arguments, if their signature is exactly `expected`; lets a handler reject a call
    /// with ``MethodReply/invalidArguments(_:)`` instead of picking values apart by hand.
    public func arguments(matching expected: String) throws(DBusError) -> [DBusValue] {
        guard signature == expected else { throw .typeMismatch(expected: expected, actual: signature) }
        return arguments
    }
}

/// What a handler answers to a ``MethodCall``.
public enum MethodReply: Sendable, Equatable {
    /// A method return with these values (none for a `void` method).
    case values([DBusValue])
    /// An error reply. An invalid error name is sent as `org.freedesktop.DBus.Error.Failed`.
    case error(name: String, message: String)
    /// Not this handler's call: sd-bus answers UnknownMethod (or UnknownObject) itself.
    case notHandled
    /// The handler answers later through the call's ``MethodCall/deferredReply``.
    case deferred

    /// A method return with no values.
    public static let empty = MethodReply.values([])

    /// `org.freedesktop.DBus.Error.InvalidArgs` with `message`.
    public static func invalidArguments(_ message: String) -> MethodReply {
        .error(name: DBusErrorName.invalidArgs, message: message)
    }
}

/// A signal to emit, or one received through a subscription.
public struct DBusSignal: Sendable, Equatable {
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
    /// The emitter's unique bus name; set on received signals, ignored when emitting. The bus
    /// daemon sets it, so a receiver can tell who sent a signal.
    public var sender: String?
    /// When emitting: the one connection to deliver to (a unicast signal), whatever its match
    /// rules; nil for every subscriber.
    public var destination: String?

    public init(path: String, interface: String, member: String, arguments: [DBusValue] = [], sender: String? = nil, destination: String? = nil) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.sender = sender
        self.destination = destination
    }

    public static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` (`sa{sv}as`): how BlueZ learns of a
    /// new characteristic value to notify.
    public static func propertiesChanged(
        path: String,
        interface: String,
        changed: DBusProperties,
        invalidated: [String] = []
    ) -> DBusSignal {
        DBusSignal(
            path: path,
            interface: propertiesInterface,
            member: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .stringArray(invalidated)]
        )
    }

    /// The parts of a received PropertiesChanged signal.
    public func asPropertiesChanged() throws(DBusError) -> (interface: String, changed: DBusProperties, invalidated: [String]) {
        guard interface == Self.propertiesInterface, member == "PropertiesChanged" else {
            throw .typeMismatch(expected: "\(Self.propertiesInterface).PropertiesChanged", actual: "\(interface).\(member)")
        }
        let signature = DBusValue.signature(of: arguments)
        guard signature == "sa{sv}as", let name = arguments[0].stringValue, let invalidated = arguments[2].stringArrayValue else {
            throw .typeMismatch(expected: "sa{sv}as", actual: signature)
        }
        return (name, try arguments[1].asProperties(), invalidated)
    }
}

/// Header fields of a received message. sd-bus returns NULL for absent ones.
struct MessageHeader {
    var path: String?
    var interface: String?
    var member: String?
    var sender: String?

    init(_ message: OpaquePointer) {
        path = sd_bus_message_get_path(message).map { String(cString: $0) }
        interface = sd_bus_message_get_interface(message).map { String(cString: $0) }
        member = sd_bus_message_get_member(message).map { String(cString: $0) }
        sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
    }

    /// Checks the names a message to be sent carries, so the error names the bad one.
    static func validate(path: String, interface: String?, member: String) throws(DBusError) {
        guard DBusNames.isValidObjectPath(path) else { throw .invalidValue("\"\(path)\" is not a valid object path") }
        if let interface, !DBusNames.isValidInterfaceName(interface) {
            throw .invalidValue("\"\(interface)\" is not a valid interface name")
        }
        guard DBusNames.isValidMemberName(member) else { throw .invalidValue("\"\(member)\" is not a valid member name") }
    }
}
