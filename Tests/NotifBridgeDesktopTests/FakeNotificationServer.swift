import NotifBridgeDBus
import NotifBridgeTestSupport
import Synchronization

/// A notification server of the test's own on a private bus: it answers `GetCapabilities`,
/// `Notify` and `CloseNotification` as the specification says, records the calls, and emits the
/// signals a person's clicks would.
final class FakeNotificationServer: Sendable {
    struct Posted: Sendable, Equatable {
        var id: UInt32
        var replaces: UInt32
        var summary: String
        var body: String
        var actions: [String]
        var hints: [String: DBusValue]
        var expireTimeout: Int32
    }

    let connection: DBusConnection
    private final class State: Sendable {
        let mutex = Mutex<(nextID: UInt32, posted: [Posted], closed: [UInt32], client: String?)>((1, [], [], nil))
    }

    private let state = State()

    init(address: DBusBusAddress, capabilities: [String]) async throws {
        connection = try await DBusConnection.connect(to: address)
        try await connection.requestName("org.freedesktop.Notifications")
        try await connection.exportObject(at: "/org/freedesktop/Notifications") { [state] call in
            switch call.member {
            case "GetCapabilities":
                return .values([.array(element: "s", capabilities.map(DBusValue.string))])
            case "Notify":
                guard let arguments = try? call.arguments(matching: "susssasa{sv}i") else { return .invalidArguments("Notify takes susssasa{sv}i") }
                guard case .array(_, let actions) = arguments[5], case .dictionary(_, _, let hints) = arguments[6] else { return .invalidArguments("actions, hints") }
                let id = state.mutex.withLock { state -> UInt32 in
                    state.client = call.sender
                    let replaces = arguments[1].uint32Value ?? 0
                    let id = replaces != 0 ? replaces : state.nextID
                    if replaces == 0 { state.nextID += 1 }
                    state.posted.append(Posted(
                        id: id, replaces: replaces, summary: arguments[3].stringValue ?? "", body: arguments[4].stringValue ?? "",
                        actions: actions.compactMap(\.stringValue),
                        hints: Dictionary(hints.compactMap { key, value in
                            guard let key = key.stringValue, case .variant(let inner) = value else { return nil }
                            return (key, inner)
                        }, uniquingKeysWith: { first, _ in first }),
                        expireTimeout: arguments[7].int32Value ?? 0
                    ))
                    return id
                }
                return .values([.uint32(id)])
            case "CloseNotification":
                guard let id = call.arguments.first?.uint32Value else { return .invalidArguments("CloseNotification takes u") }
                state.mutex.withLock { $0.closed.append(id) }
                return .empty
            default:
                return .notHandled
            }
        }
    }

    var posted: [Posted] { state.mutex.withLock { $0.posted } }
    var closed: [UInt32] { state.mutex.withLock { $0.closed } }
    /// The unique bus name of whoever called `Notify` last: the sink's connection.
    var client: String? { state.mutex.withLock { $0.client } }

    func emit(_ member: String, _ arguments: [DBusValue]) async throws {
        try await connection.emit(DBusSignal(path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: member, arguments: arguments))
    }

    /// Waits (``TestWait``) until `predicate` holds for what was posted and closed.
    func waitFor(_ what: String, _ predicate: (FakeNotificationServer) -> Bool) async throws {
        try await TestWait.until(what) { predicate(self) }
    }
}
