import CSystemdBus
import Glibc

/// Which bus to connect to.
public enum DBusBusAddress: Sendable, Equatable {
    /// The system bus (BlueZ lives here); honours `DBUS_SYSTEM_BUS_ADDRESS`.
    case system
    /// The user's session bus; honours `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// A bus daemon at this address, e.g. `unix:path=/tmp/bus` as `dbus-daemon --print-address` prints it.
    case address(String)
}

/// The owner of one sd_bus, living on the connection's dedicated thread. sd-bus objects are not
/// thread-safe, so every sd-bus call for a connection happens here: in jobs taken from the
/// ``BusCore`` queue, or in callbacks from `sd_bus_process`.
final class BusLoop {
    let bus: OpaquePointer
    let core: BusCore
    /// Non-floating slots (exports, subscriptions), released on cancel or at teardown.
    private var slots: [UInt64: OpaquePointer] = [:]
    private var nextSlotID: UInt64 = 1
    /// Waits for Hello to be answered; nil once the connection is reported ready or failed.
    private var readiness: Completion<String>?

    private init(bus: OpaquePointer, core: BusCore, readiness: Completion<String>) {
        self.bus = bus
        self.core = core
        self.readiness = readiness
    }

    /// Starts the bus thread. `ready` gets the unique name once the bus has answered Hello,
    /// or the reason the connection could not be made.
    static func start(address: DBusBusAddress, core: BusCore, ready: Completion<String>) {
        let start = Unmanaged.passRetained(ThreadStart(address: address, core: core, ready: ready))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, busThreadMain, start.toOpaque())
        guard result == 0 else {
            start.release()
            for job in core.finish() { job(nil) }
            ready.resume(returning: .failure(.system(operation: "pthread_create", errno: result)))
            return
        }
        pthread_detach(thread)
    }

    fileprivate final class ThreadStart {
        let address: DBusBusAddress
        let core: BusCore
        let ready: Completion<String>

        init(address: DBusBusAddress, core: BusCore, ready: Completion<String>) {
            self.address = address
            self.core = core
            self.ready = ready
        }

        func run() {
            let bus: OpaquePointer
            do throws(DBusError) {
                bus = try BusLoop.open(address)
            } catch {
                for job in core.finish() { job(nil) }
                ready.resume(returning: .failure(error))
                return
            }
            let loop = BusLoop(bus: bus, core: core, readiness: ready)
            loop.teardown(loop.runUntilClosed())
        }
    }

    private static func open(_ address: DBusBusAddress) throws(DBusError) -> OpaquePointer {
        try SystemdLibrary.require()
        var bus: OpaquePointer?
        switch address {
        case .system:
            try DBusError.check(sd_bus_open_system(&bus), "sd_bus_open_system")
        case .session:
            try DBusError.check(sd_bus_open_user(&bus), "sd_bus_open_user")
        case .address(let address):
            try DBusError.check(sd_bus_new(&bus), "sd_bus_new")
            do throws(DBusError) {
                try DBusError.check(sd_bus_set_address(bus, address), "sd_bus_set_address \(address)")
                try DBusError.check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
                try DBusError.check(sd_bus_start(bus), "sd_bus_start \(address)")
            } catch {
                sd_bus_unref(bus)
                throw error
            }
        }
        guard let bus else { throw .closed }
        return bus
    }

    /// Jobs, then everything sd-bus has to dispatch, then sleep until the socket, the wake fd or
    /// an sd-bus timeout needs attention. Returns why it stopped.
    private func runUntilClosed() -> DBusError {
        while true {
            let (jobs, closeRequested) = core.takeJobs()
            for job in jobs { job(self) }
            if closeRequested { return .closed }
            do throws(DBusError) {
                try processPending()
                reportReadiness()
                try waitForActivity()
            } catch {
                return error
            }
        }
    }

    private func processPending() throws(DBusError) {
        while true {
            let result = sd_bus_process(bus, nil)
            if result == -ENOTCONN { throw .closed }
            try DBusError.check(result, "sd_bus_process")
            if result == 0 { break }
        }
        guard sd_bus_is_open(bus) > 0 else { throw .closed }
    }

    private func reportReadiness() {
        guard let readiness, sd_bus_is_ready(bus) > 0 else { return }
        var name: UnsafePointer<CChar>?
        let result = sd_bus_get_unique_name(bus, &name)
        if result >= 0, let name {
            readiness.resume(returning: .success(String(cString: name)))
        } else {
            readiness.resume(returning: .failure(.system(operation: "sd_bus_get_unique_name", errno: -result)))
        }
        self.readiness = nil
    }

    private func waitForActivity() throws(DBusError) {
        let fd = try DBusError.check(sd_bus_get_fd(bus), "sd_bus_get_fd")
        let events = try DBusError.check(sd_bus_get_events(bus), "sd_bus_get_events")
        var deadline: UInt64 = 0
        try DBusError.check(sd_bus_get_timeout(bus, &deadline), "sd_bus_get_timeout")
        var fds = [
            pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0),
            pollfd(fd: core.wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        let result = poll(&fds, nfds_t(fds.count), Self.milliseconds(until: deadline))
        if result < 0, errno != EINTR { throw .system(operation: "poll", errno: errno) }
        if fds[1].revents & Int16(POLLIN) != 0 { core.drainWakeups() }
    }

    /// sd-bus gives an absolute CLOCK_MONOTONIC deadline in µs, or UInt64.max for none.
    private static func milliseconds(until deadline: UInt64) -> Int32 {
        guard deadline != .max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(clamping: (deadline - nowMicroseconds + 999) / 1_000)
    }

    /// Fails what still waits, then frees slots (their destroy callbacks complete pending calls
    /// and release handlers) and the bus, flushing messages already queued for sending. A
    /// connection that ended unasked tells its loss handlers last.
    private func teardown(_ reason: DBusError) {
        readiness?.resume(returning: .failure(reason))
        readiness = nil
        let told = core.lost(reason)
        defer { for handler in told { handler(reason) } }
        for job in core.finish() { job(nil) }
        let held = slots
        slots = [:]
        for slot in held.values { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// Keeps a non-floating slot until ``releaseSlot(_:)`` or teardown.
    func keep(_ slot: OpaquePointer) -> UInt64 {
        let id = nextSlotID
        nextSlotID += 1
        slots[id] = slot
        return id
    }

    /// Frees a kept slot. Only called from jobs, never inside an sd-bus callback.
    func releaseSlot(_ id: UInt64) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        sd_bus_slot_unref(slot)
    }
}

private func busThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let start = Unmanaged<BusLoop.ThreadStart>.fromOpaque(context).takeRetainedValue()
    start.run()
    return nil
}
