import CSystemdBus
import Glibc

/// An sd-bus object that never talks to anyone, for building and reading messages without a
/// daemon (used by the tests).
///
/// sd-bus refuses to create messages on a bus that was never started (`-ENOTCONN`), and reads
/// only sealed messages (`-EPERM`). So the bus is started on one end of a socketpair and closed
/// at once: a closed bus still creates messages, and `sd_bus_message_seal` plus a rewind makes
/// one readable, exactly as if it had been received.
final class OfflineBus {
    private let bus: OpaquePointer

    init() throws(DBusError) {
        try SystemdLibrary.require()
        var created: OpaquePointer?
        try DBusError.check(sd_bus_new(&created), "sd_bus_new")
        guard let bus = created else { throw .closed }
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            sd_bus_unref(bus)
            throw .system(operation: "socketpair", errno: errno)
        }
        do throws(DBusError) {
            try DBusError.check(sd_bus_set_fd(bus, fds[0], fds[0]), "sd_bus_set_fd")
        } catch {
            close(fds[0])
            close(fds[1])
            sd_bus_unref(bus)
            throw error
        }
        // The bus owns fds[0] from here on, and sd_bus_close closes it. The peer stays open
        // until the start has written its AUTH line, which would otherwise fail with EPIPE.
        let started = sd_bus_start(bus)
        sd_bus_close(bus)
        close(fds[1])
        guard started >= 0 else {
            sd_bus_unref(bus)
            throw .system(operation: "sd_bus_start", errno: -started)
        }
        self.bus = bus
    }

    deinit {
        sd_bus_unref(bus)
    }

    /// Builds a signal message with `build`, seals it, and hands it to `read` positioned at the
    /// start of the body.
    func withSealedMessage<T>(
        build: (OpaquePointer) throws(DBusError) -> Void,
        read: (OpaquePointer) throws(DBusError) -> T
    ) throws(DBusError) -> T {
        var created: OpaquePointer?
        try DBusError.check(
            sd_bus_message_new_signal(bus, &created, "/org/notifbridge/Offline", "org.notifbridge.Offline", "Probe"),
            "sd_bus_message_new_signal"
        )
        guard let message = created else { throw .closed }
        defer { sd_bus_message_unref(message) }
        try build(message)
        try DBusError.check(sd_bus_message_seal(message, 1, 0), "sd_bus_message_seal")
        try DBusError.check(sd_bus_message_rewind(message, 1), "sd_bus_message_rewind")
        return try read(message)
    }

    /// Encodes `values` into a message body and decodes it again.
    func roundTrip(_ values: [DBusValue]) throws(DBusError) -> [DBusValue] {
        try withSealedMessage { message throws(DBusError) in
            try MessageWriter.append(values, to: message)
        } read: { message throws(DBusError) in
            try MessageReader.readBody(message)
        }
    }

    /// The signature sd-bus recorded for a body built from `values`.
    func bodySignature(of values: [DBusValue]) throws(DBusError) -> String {
        try withSealedMessage { message throws(DBusError) in
            try MessageWriter.append(values, to: message)
        } read: { message in
            sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
        }
    }
}
