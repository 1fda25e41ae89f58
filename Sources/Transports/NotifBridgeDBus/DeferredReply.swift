import CSystemdBus
import Synchronization

/// The reply to one received method call, sent later from any thread. A handler whose answer
/// needs async work (a GATT application asking its owner whether to accept a write) returns
/// ``MethodReply/deferred`` and answers through ``MethodCall/deferredReply`` once it knows,
/// because handlers run on the bus thread and must not wait there.
public final class DeferredReply: Sendable {
    private let core: BusCore
    private let call: Mutex<ReceivedCall?>

    /// Bus thread: keeps its own reference to the call message until the reply is sent.
    init(core: BusCore, message: OpaquePointer) {
        self.core = core
        call = Mutex(ReceivedCall(message: sd_bus_message_ref(message)))
    }

    /// Sends `reply`; only the first answer counts. `.notHandled` and `.deferred` are sent as
    /// `org.freedesktop.DBus.Error.Failed`.
    public func send(_ reply: MethodReply) {
        guard let call = take() else { return }
        core.submit { loop in
            if loop != nil { ObjectBox.send(reply, to: call.message) }
            sd_bus_message_unref(call.message)
        }
    }

    /// Bus thread: the handler answered at once, so the reference is dropped unused.
    func release() {
        guard let call = take() else { return }
        sd_bus_message_unref(call.message)
    }

    private func take() -> ReceivedCall? {
        call.withLock { call in
            defer { call = nil }
            return call
        }
    }

    /// A caller is never left waiting for its timeout because a handler forgot to answer.
    deinit {
        send(.error(name: DBusErrorName.failed, message: "the handler deferred its reply and never answered"))
    }
}

/// A referenced sd-bus message; only the bus thread (or a closed connection's last job) uses it.
struct ReceivedCall: @unchecked Sendable {
    let message: OpaquePointer
}
