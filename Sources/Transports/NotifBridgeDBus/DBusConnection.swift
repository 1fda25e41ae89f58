import Glibc

/// A D-Bus connection whose sd_bus lives on one dedicated thread. Methods may be called from any
/// thread or task; they queue work for that thread and await its result, so nothing here blocks
/// the caller's thread.
///
/// Handlers (exported objects, subscriptions) run on the bus thread: they must return quickly
/// and must not wait for this connection's other methods. Handlers that capture the connection
/// form a cycle that ``close()`` breaks; call it when done.
public final class DBusConnection: Sendable {
    /// This connection's unique bus name, e.g. `:1.42`.
    public let uniqueName: String
    private let core: BusCore
    /// Owners of the well-known names that subscriptions name as their sender.
    private let owners = NameOwners()

    private init(core: BusCore, uniqueName: String) {
        self.core = core
        self.uniqueName = uniqueName
    }

    deinit {
        core.requestClose()
    }

    /// Throws, with what to install, if this machine cannot do D-Bus at all (no libsystemd.so.0).
    /// ``connect(to:)`` checks it too; callers that add context to connection errors ask first.
    public static func checkAvailable() throws(DBusError) {
        try SystemdLibrary.require()
    }

    /// Connects, and returns once the bus has answered Hello.
    public static func connect(to address: DBusBusAddress = .system) async throws(DBusError) -> DBusConnection {
        let core = try BusCore()
        let result = await withCheckedContinuation { (ready: Completion<String>) in
            BusLoop.start(address: address, core: core, ready: ready)
        }
        return DBusConnection(core: core, uniqueName: try result.get())
    }

    /// Calls a method and returns the reply's values. An error reply throws `.errorReply` with
    /// its name and message, and so does a timeout (`NoReply`). A closed connection throws
    /// `.closed`; a lost one `.closed` or a `NoReply` that sd-bus synthesized. `destination` is
    /// nil only on peer-to-peer connections. `timeout` nil means sd-bus's default of 25 s.
    public func call(
        destination: String?,
        path: String,
        interface: String?,
        member: String,
        arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws(DBusError) -> [DBusValue] {
        let result = await withCheckedContinuation { (completion: Completion<[DBusValue]>) in
            core.submit { loop in
                guard let loop else { return completion.resume(returning: .failure(.closed)) }
                do throws(DBusError) {
                    try loop.startCall(
                        destination: destination, path: path, interface: interface, member: member,
                        arguments: arguments, timeout: timeout, completion: completion
                    )
                } catch {
                    completion.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Serves method calls for `path` (and, by default, every path below it) with `handler`,
    /// which runs on the bus thread. Calls it answers with `.notHandled` get UnknownMethod.
    @discardableResult
    public func exportObject(
        at path: String,
        includingChildren: Bool = true,
        handler: @escaping @Sendable (MethodCall) -> MethodReply
    ) async throws(DBusError) -> DBusRegistration {
        let id = try await perform { loop throws(DBusError) in
            try loop.export(path: path, includingChildren: includingChildren, handler: handler)
        }
        return DBusRegistration(core: core, slotID: id)
    }

    /// Emits a signal. Returns once it is queued on the connection, in submission order.
    public func emit(_ signal: DBusSignal) async throws(DBusError) {
        try await perform { loop throws(DBusError) in try loop.emit(signal) }
    }

    /// Delivers signals matching `matchRule` (e.g. `type='signal',interface='...'`) to `handler`
    /// on the bus thread. Returns once the bus daemon has accepted the rule.
    ///
    /// A rule's `sender` is checked here too, against the unique name the signal came from. The
    /// bus daemon delivers a signal addressed to this connection whatever its rules, so any
    /// client could otherwise pass for bluetoothd or the notification server. A well-known
    /// sender (`org.bluez`) is followed to whichever connection owns it (``NameOwners``).
    @discardableResult
    public func subscribe(
        matchRule: String,
        handler: @escaping @Sendable (DBusSignal) -> Void
    ) async throws(DBusError) -> DBusRegistration {
        guard let sender = NameOwners.sender(in: matchRule) else { return try await install(matchRule: matchRule, handler: handler) }
        if sender.hasPrefix(":") || sender == Self.busDaemon {
            return try await install(matchRule: matchRule) { signal in
                if signal.sender == sender { handler(signal) }
            }
        }
        try await owners.follow(sender, on: self)
        let owners = self.owners
        return try await install(matchRule: matchRule) { signal in
            if let from = signal.sender, from == owners.owner(of: sender) { handler(signal) }
        }
    }

    /// Installs a match rule whose signals all go to `handler`.
    func install(matchRule: String, handler: @escaping @Sendable (DBusSignal) -> Void) async throws(DBusError) -> DBusRegistration {
        let result = await withCheckedContinuation { (installed: Completion<UInt64>) in
            core.submit { loop in
                guard let loop else { return installed.resume(returning: .failure(.closed)) }
                do throws(DBusError) {
                    try loop.subscribe(matchRule: matchRule, handler: handler, installed: installed)
                } catch {
                    installed.resume(returning: .failure(error))
                }
            }
        }
        return DBusRegistration(core: core, slotID: try result.get())
    }

    /// The bus daemon's name: the destination of its methods and the sender of its signals
    /// (such as `NameOwnerChanged`), which no other connection can send as.
    public static let busDaemon = "org.freedesktop.DBus"

    /// Takes a well-known name such as `org.notifbridge.Accessory`, without queueing for it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await callBusDaemon("RequestName", [.string(name), .uint32(4)])
        guard reply.count == 1, let code = reply[0].uint32Value else {
            throw .typeMismatch(expected: "u", actual: DBusValue.signature(of: reply))
        }
        // 1: now the primary owner; 4: already was. 2 and 3 mean another connection has it.
        guard code == 1 || code == 4 else { throw .system(operation: "RequestName \(name)", errno: EEXIST) }
    }

    /// The unique name (`:1.42`) of the connection that owns the well-known `name` now, the
    /// sender its signals carry. Fails with the bus's `NameHasNoOwner` when none does.
    public func nameOwner(of name: String) async throws(DBusError) -> String {
        let reply = try await callBusDaemon("GetNameOwner", [.string(name)])
        guard reply.count == 1, let owner = reply[0].stringValue else {
            throw .typeMismatch(expected: "s", actual: DBusValue.signature(of: reply))
        }
        return owner
    }

    private func callBusDaemon(_ member: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call(destination: Self.busDaemon, path: "/org/freedesktop/DBus", interface: Self.busDaemon, member: member, arguments: arguments, timeout: .seconds(5))
    }

    /// Closes the connection. Queued work still runs, then pending calls fail with `.closed`,
    /// exports and subscriptions end, and the bus thread exits. Safe to call from any thread,
    /// including from a handler, and more than once.
    public func close() {
        core.requestClose()
    }

    /// Calls `handler` once, on the bus thread, if the connection ends without ``close()``: the
    /// bus daemon exited or dropped it. Nothing on it works after that, and nothing else says
    /// so: subscriptions just stop. If that already happened, it is called at once, on the
    /// caller's thread; never after ``close()``.
    public func onLoss(_ handler: @escaping DBusLossHandler) {
        core.onLoss(handler)
    }

    /// Whether ``close()`` was called or the connection was lost.
    public var isClosed: Bool { core.isClosed }

    /// Runs `body` on the bus thread and returns its result.
    private func perform<T: Sendable>(_ body: @escaping @Sendable (BusLoop) throws(DBusError) -> T) async throws(DBusError) -> T {
        let result = await withCheckedContinuation { (completion: Completion<T>) in
            core.submit { loop in
                guard let loop else { return completion.resume(returning: .failure(.closed)) }
                completion.resume(returning: Result { () throws(DBusError) -> T in try body(loop) })
            }
        }
        return try result.get()
    }
}

/// An exported object or a subscription; it stays active until cancelled or the connection closes.
public struct DBusRegistration: Sendable {
    private let core: BusCore
    private let slotID: UInt64

    init(core: BusCore, slotID: UInt64) {
        self.core = core
        self.slotID = slotID
    }

    /// Unexports the object or ends the subscription; returns once the bus thread has done so.
    /// Does nothing if the connection is already closed.
    public func cancel() async {
        let id = slotID
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            core.submit { loop in
                loop?.releaseSlot(id)
                done.resume()
            }
        }
    }
}
