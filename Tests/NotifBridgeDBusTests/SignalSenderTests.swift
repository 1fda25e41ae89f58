import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing

/// The bus daemon delivers a signal addressed to one connection whatever that connection's
/// match rules say, so a rule's `sender` alone does not keep out a client posing as bluetoothd,
/// the notification server or the bus itself. The connection checks each signal's sender.
@Suite(
    "Signals only from the sender a rule names",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .serialized,
    .timeLimit(.minutes(1))
)
struct SignalSenderTests {
    static let name = "org.notifbridge.Owner"
    static let path = "/org/notifbridge/owner"
    static let interface = "org.notifbridge.Owner1"

    /// Members received, in order.
    final class Received: Sendable {
        let members = Mutex<[String]>([])
        func wait(for member: String) async throws {
            for _ in 0..<3000 where !members.withLock({ $0.contains(member) }) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(members.withLock { $0.contains(member) }, "\(member) never arrived")
        }
    }

    /// A forger and a listener on `daemon`, the listener subscribed to `rule` (by default the
    /// owner's signals) and recording `note` of each signal it is given.
    static func listening(
        on daemon: PrivateBusDaemon,
        to rule: String = "type='signal',sender='\(name)',path='\(path)',interface='\(interface)'",
        note: @escaping @Sendable (DBusSignal) -> String = { $0.member }
    ) async throws -> (forger: DBusConnection, listener: DBusConnection, received: Received) {
        let forger = try await DBusConnection.connect(to: daemon.address)
        let listener = try await DBusConnection.connect(to: daemon.address)
        let received = Received()
        try await listener.subscribe(matchRule: rule) { signal in
            received.members.withLock { $0.append(note(signal)) }
        }
        return (forger, listener, received)
    }

    static func signal(_ member: String, to destination: String? = nil) -> DBusSignal {
        DBusSignal(path: path, interface: interface, member: member, destination: destination)
    }

    @Test("A well-known sender: its owner's signals arrive, a stranger's addressed ones do not, and a new owner takes over")
    func wellKnownSender() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let owner = try await DBusConnection.connect(to: daemon.address)
        try await owner.requestName(Self.name)
        let (forger, listener, received) = try await Self.listening(on: daemon)
        defer {
            forger.close()
            listener.close()
        }

        try await forger.emit(Self.signal("Forged", to: listener.uniqueName))
        try await owner.emit(Self.signal("FromOwner"))
        try await received.wait(for: "FromOwner")

        // A forged NameOwnerChanged naming the forger does not make it the owner.
        try await forger.emit(DBusSignal(
            path: "/org/freedesktop/DBus", interface: DBusConnection.busDaemon, member: "NameOwnerChanged",
            arguments: [.string(Self.name), .string(owner.uniqueName), .string(forger.uniqueName)], destination: listener.uniqueName
        ))
        try await forger.emit(Self.signal("ForgedAsOwner", to: listener.uniqueName))
        try await forger.emit(Self.signal("ForgedAsOwnerToAll"))

        // The name moves to another connection (the owner's connection closes): the new
        // owner's signals count.
        owner.close()
        let successor = try await DBusConnection.connect(to: daemon.address)
        defer { successor.close() }
        try await successor.requestName(Self.name)
        try await forger.emit(Self.signal("ForgedAgain", to: listener.uniqueName))
        // NameOwnerChanged reaches the listener before the successor's first signal: the bus
        // daemon sends both, in this order.
        try await successor.emit(Self.signal("FromSuccessor"))
        try await received.wait(for: "FromSuccessor")
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.members.withLock { $0 } == ["FromOwner", "FromSuccessor"])
    }

    @Test("A name with no owner when subscribed: its first owner's signals arrive, a stranger's do not")
    func ownerArrivesLater() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let (forger, listener, received) = try await Self.listening(on: daemon)
        defer {
            forger.close()
            listener.close()
        }
        try await forger.emit(Self.signal("Forged", to: listener.uniqueName))
        let owner = try await DBusConnection.connect(to: daemon.address)
        defer { owner.close() }
        try await owner.requestName(Self.name)
        try await owner.emit(Self.signal("FromFirstOwner"))
        try await received.wait(for: "FromFirstOwner")
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.members.withLock { $0 } == ["FromFirstOwner"])
    }

    @Test("The bus daemon as sender: a client's NameOwnerChanged addressed to the listener does not arrive")
    func busDaemonSender() async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let (forger, listener, received) = try await Self.listening(
            on: daemon,
            to: "type='signal',sender='\(DBusConnection.busDaemon)',interface='\(DBusConnection.busDaemon)',member='NameOwnerChanged',arg0='\(Self.name)'"
        ) { $0.sender ?? "?" }
        defer {
            forger.close()
            listener.close()
        }
        try await forger.emit(DBusSignal(
            path: "/org/freedesktop/DBus", interface: DBusConnection.busDaemon, member: "NameOwnerChanged",
            arguments: [.string(Self.name), .string(":1.1"), .string("")], destination: listener.uniqueName
        ))
        let owner = try await DBusConnection.connect(to: daemon.address)
        defer { owner.close() }
        try await owner.requestName(Self.name)
        try await received.wait(for: DBusConnection.busDaemon)
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.members.withLock { $0 } == [DBusConnection.busDaemon])
    }
}
