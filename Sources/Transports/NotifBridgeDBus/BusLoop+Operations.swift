import CSystemdBus

/// The operations jobs run on the bus thread. Each either throws before sd-bus takes over a
/// completion, or hands the completion to a slot box and does not throw afterwards, so every
/// completion is resumed exactly once.
extension BusLoop {
    /// Sends a method call with `sd_bus_call_async`. A blocking `sd_bus_call` would stall the
    /// loop, and BlueZ calls back into the app (GetManagedObjects) before it answers
    /// RegisterApplication.
    func startCall(
        destination: String?,
        path: String,
        interface: String?,
        member: String,
        arguments: [DBusValue],
        timeout: Duration?,
        completion: Completion<[DBusValue]>
    ) throws(DBusError) {
        try MessageHeader.validate(path: path, interface: interface, member: member)
        var created: OpaquePointer?
        try DBusError.check(
            sd_bus_message_new_method_call(bus, &created, destination, path, interface, member),
            "creating the call \(interface ?? "-").\(member) to \(destination ?? "peer")"
        )
        guard let message = created else { throw .closed }
        defer { sd_bus_message_unref(message) }
        try MessageWriter.append(arguments, to: message)

        let box = PendingCallBox(completion)
        var createdSlot: OpaquePointer?
        try DBusError.check(
            sd_bus_call_async(bus, &createdSlot, message, slotMessageTrampoline, box.userdata, Self.microseconds(timeout)),
            "sending \(interface ?? "-").\(member)"
        )
        guard let slot = createdSlot else { throw .closed }
        try box.attach(to: slot)
        // Floating: the bus keeps the slot until the reply arrives (or the bus goes away).
        if sd_bus_slot_set_floating(slot, 1) >= 0 {
            sd_bus_slot_unref(slot)
        } else {
            _ = keep(slot)
        }
    }

    /// Exports a handler at `path` (and, with `includingChildren`, every path below it).
    func export(path: String, includingChildren: Bool, handler: @escaping @Sendable (MethodCall) -> MethodReply) throws(DBusError) -> UInt64 {
        guard DBusNames.isValidObjectPath(path) else { throw .invalidValue("\"\(path)\" is not a valid object path") }
        let box = ObjectBox(core: core, handler: handler)
        var created: OpaquePointer?
        let result = includingChildren
            ? sd_bus_add_fallback(bus, &created, path, slotMessageTrampoline, box.userdata)
            : sd_bus_add_object(bus, &created, path, slotMessageTrampoline, box.userdata)
        try DBusError.check(result, "exporting \(path)")
        guard let slot = created else { throw .closed }
        try box.attach(to: slot)
        return keep(slot)
    }

    /// Adds a match with `sd_bus_add_match_async`; `installed` hears whether the bus accepted it.
    func subscribe(
        matchRule: String,
        handler: @escaping @Sendable (DBusSignal) -> Void,
        installed: Completion<UInt64>
    ) throws(DBusError) {
        guard !matchRule.utf8.contains(0) else { throw .invalidValue("match rule contains a NUL byte") }
        let box = SubscriptionBox(core: core, handler: handler, installed: installed)
        var created: OpaquePointer?
        try DBusError.check(
            sd_bus_add_match_async(bus, &created, matchRule, slotMessageTrampoline, matchInstalledTrampoline, box.userdata),
            "adding match \(matchRule)"
        )
        guard let slot = created else { throw .closed }
        try box.attach(to: slot)
        box.slotID = keep(slot)
    }

    /// Queues a signal for sending; sd-bus writes it out as the socket allows.
    func emit(_ signal: DBusSignal) throws(DBusError) {
        try MessageHeader.validate(path: signal.path, interface: signal.interface, member: signal.member)
        var created: OpaquePointer?
        try DBusError.check(
            sd_bus_message_new_signal(bus, &created, signal.path, signal.interface, signal.member),
            "creating the signal \(signal.interface).\(signal.member)"
        )
        guard let message = created else { throw .closed }
        defer { sd_bus_message_unref(message) }
        if let destination = signal.destination {
            try DBusError.check(sd_bus_message_set_destination(message, destination), "addressing \(signal.member) to \(destination)")
        }
        try MessageWriter.append(signal.arguments, to: message)
        try DBusError.check(sd_bus_send(bus, message, nil), "sending \(signal.interface).\(signal.member)")
    }

    /// sd-bus takes µs, where 0 means its default of 25 s.
    private static func microseconds(_ timeout: Duration?) -> UInt64 {
        guard let timeout, timeout > .zero else { return 0 }
        let (seconds, attoseconds) = timeout.components
        // Capped far beyond any useful timeout, so the multiplication cannot overflow.
        return max(1, UInt64(min(seconds, 1 << 40)) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000))
    }
}
