import CSystemdBus

/// Swift state behind one sd-bus slot (a pending call, an exported object, a match), handed to
/// C as the slot's userdata. The slot owns one retain, dropped by its destroy callback, so the
/// box lives exactly as long as sd-bus may call into it. Boxes live and die on the bus thread.
class SlotBox {
    /// A message for this slot. The result goes back to sd-bus: 0 lets other handlers (or
    /// sd-bus's own UnknownMethod reply) see the message.
    func handle(_ message: OpaquePointer) -> Int32 { 0 }

    /// The slot is gone (answered, cancelled, or the bus closed): complete anything still waiting.
    func slotDestroyed() {}

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Gives the slot its retain of this box and the destroy callback that drops it. If that
    /// fails the slot is freed at once, before sd-bus could call into the box.
    func attach(to slot: OpaquePointer) throws(DBusError) {
        let retained = Unmanaged.passRetained(self)
        let result = sd_bus_slot_set_destroy_callback(slot, slotDestroyTrampoline)
        if result < 0 {
            sd_bus_slot_unref(slot)
            retained.release()
            throw .system(operation: "sd_bus_slot_set_destroy_callback", errno: -result)
        }
    }
}

/// The single C entry point for every slot's messages: it finds the box and lets it dispatch.
func slotMessageTrampoline(
    _ message: OpaquePointer?,
    _ userdata: UnsafeMutableRawPointer?,
    _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let message, let userdata else { return 0 }
    return Unmanaged<SlotBox>.fromOpaque(userdata).takeUnretainedValue().handle(message)
}

/// The AddMatch reply for a subscription; sd-bus passes the match slot's userdata here too.
func matchInstalledTrampoline(
    _ message: OpaquePointer?,
    _ userdata: UnsafeMutableRawPointer?,
    _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let message, let userdata,
        let box = Unmanaged<SlotBox>.fromOpaque(userdata).takeUnretainedValue() as? SubscriptionBox
    else { return 0 }
    box.installed(message)
    return 0
}

func slotDestroyTrampoline(_ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    Unmanaged<SlotBox>.fromOpaque(userdata).takeRetainedValue().slotDestroyed()
}

/// The error name and text of an error message, or nil for any other message.
func errorReply(of message: OpaquePointer) -> DBusError? {
    guard let error = sd_bus_message_get_error(message), let name = error.pointee.name else { return nil }
    return .errorReply(name: String(cString: name), message: error.pointee.message.map { String(cString: $0) } ?? "")
}

/// Continuations resume with a Result so that the public API can throw `DBusError` typed.
typealias Completion<T: Sendable> = CheckedContinuation<Result<T, DBusError>, Never>

/// An outstanding `sd_bus_call_async`: completes with the reply's values or error.
final class PendingCallBox: SlotBox {
    private var completion: Completion<[DBusValue]>?

    init(_ completion: Completion<[DBusValue]>) {
        self.completion = completion
    }

    override func handle(_ message: OpaquePointer) -> Int32 {
        if let error = errorReply(of: message) {
            complete(.failure(error))
        } else {
            complete(Result { () throws(DBusError) in try MessageReader.readBody(message) })
        }
        return 1
    }

    override func slotDestroyed() {
        complete(.failure(.closed))
    }

    private func complete(_ result: Result<[DBusValue], DBusError>) {
        completion?.resume(returning: result)
        completion = nil
    }
}

/// An exported object (or subtree): decodes each method call, runs the Swift handler on the bus
/// thread, and sends its reply.
final class ObjectBox: SlotBox {
    private let core: BusCore
    private let handler: @Sendable (MethodCall) -> MethodReply

    init(core: BusCore, handler: @escaping @Sendable (MethodCall) -> MethodReply) {
        self.core = core
        self.handler = handler
    }

    override func handle(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, nil, nil) > 0 else { return 0 }
        let header = MessageHeader(message)
        guard let path = header.path, let member = header.member else { return 0 }
        let reply: MethodReply
        let deferred = DeferredReply(core: core, message: message)
        do throws(DBusError) {
            let arguments = try MessageReader.readBody(message)
            reply = handler(MethodCall(path: path, interface: header.interface, member: member, sender: header.sender,
                                       arguments: arguments, deferredReply: deferred))
        } catch {
            reply = .invalidArguments(error.description)
        }
        switch reply {
        case .notHandled:
            deferred.release()
            return 0
        case .deferred:
            return 1
        case .values, .error:
            deferred.release()
            Self.send(reply, to: message)
        }
        return 1
    }

    /// Bus thread: answers `call` with `reply`.
    static func send(_ reply: MethodReply, to call: OpaquePointer) {
        switch reply {
        case .values(let values):
            sendReturn(to: call, values)
        case .error(let name, let text):
            sendError(to: call, name: name, text: text)
        case .notHandled, .deferred:
            sendError(to: call, name: DBusErrorName.failed, text: "no answer to this call")
        }
    }

    /// A method return; if the values cannot be encoded the caller gets Failed saying why,
    /// rather than waiting for a timeout.
    private static func sendReturn(to call: OpaquePointer, _ values: [DBusValue]) {
        guard sd_bus_message_get_expect_reply(call) > 0 else { return }
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        do throws(DBusError) {
            try MessageWriter.append(values, to: reply)
        } catch {
            sendError(to: call, name: DBusErrorName.failed, text: "reply could not be encoded: \(error)")
            return
        }
        _ = sd_bus_send(nil, reply, nil)
    }

    /// An error reply. sd-bus does not check error names, and dbus-daemon disconnects a client
    /// that sends an invalid one, so a bad name is replaced here.
    private static func sendError(to call: OpaquePointer, name: String, text: String) {
        guard sd_bus_message_get_expect_reply(call) > 0 else { return }
        let validName = DBusNames.isValidInterfaceName(name) ? name : DBusErrorName.failed
        let validText = String(decoding: text.utf8.filter { $0 != 0 }, as: UTF8.self)
        var reply: OpaquePointer?
        let created = validName.withCString { namePointer in
            validText.withCString { textPointer in
                var error = sd_bus_error(name: namePointer, message: textPointer, _need_free: 0)
                return sd_bus_message_new_method_error(call, &reply, &error)
            }
        }
        guard created >= 0, let reply else { return }
        _ = sd_bus_send(nil, reply, nil)
        sd_bus_message_unref(reply)
    }
}

/// A subscription's match: decoded signals go to the handler. The AddMatch reply reports
/// whether the bus accepted the rule; if not, the slot is released again.
final class SubscriptionBox: SlotBox {
    private let core: BusCore
    private let handler: @Sendable (DBusSignal) -> Void
    private var installCompletion: Completion<UInt64>?
    /// Set by the loop right after the slot is kept, before sd-bus can call back.
    var slotID: UInt64 = 0

    init(core: BusCore, handler: @escaping @Sendable (DBusSignal) -> Void, installed: Completion<UInt64>) {
        self.core = core
        self.handler = handler
        self.installCompletion = installed
    }

    /// Signals whose body cannot be read are dropped; sd-bus has already validated the wire
    /// format, so this only happens for types the value model lacks (unix fds).
    override func handle(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_signal(message, nil, nil) > 0 else { return 0 }
        let header = MessageHeader(message)
        guard let path = header.path, let interface = header.interface, let member = header.member,
            let arguments = try? MessageReader.readBody(message)
        else { return 0 }
        handler(DBusSignal(path: path, interface: interface, member: member, arguments: arguments, sender: header.sender))
        return 0
    }

    func installed(_ message: OpaquePointer) {
        guard let installCompletion else { return }
        self.installCompletion = nil
        if let error = errorReply(of: message) {
            installCompletion.resume(returning: .failure(error))
            // Released from a job: a slot is never freed inside its own callback.
            let id = slotID
            core.submit { loop in loop?.releaseSlot(id) }
        } else {
            installCompletion.resume(returning: .success(slotID))
        }
    }

    override func slotDestroyed() {
        installCompletion?.resume(returning: .failure(.closed))
        installCompletion = nil
    }
}
