import Synchronization

/// Which connection owns each well-known name a subscription names as its sender, kept current
/// from the bus daemon's `NameOwnerChanged`: a signal counts as the name's only when its sender
/// (set by the bus daemon, not by the emitter) is that connection. GLib's CVE-2024-34397 was
/// this check missing.
final class NameOwners: Sendable {
    private struct Followed {
        var owner: String?
        /// Set once `NameOwnerChanged` has spoken: newer than any `GetNameOwner` answer.
        var announced = false
    }

    private let names = Mutex<[String: Followed]>([:])
    /// One lookup per name, which every subscription naming it awaits.
    private let lookups = Mutex<[String: Task<Void, any Error>]>([:])

    /// The unique name that owns `name` now; nil when none does or it is not followed.
    func owner(of name: String) -> String? {
        names.withLock { $0[name]?.owner }
    }

    /// Follows `name` on `connection` from now on; returns once its owner is known (or known to
    /// be none). A lookup that fails is dropped, so the next subscription tries again.
    func follow(_ name: String, on connection: DBusConnection) async throws(DBusError) {
        let lookup = lookups.withLock { lookups in
            if let running = lookups[name] { return running }
            let started = Task { try await self.lookUp(name, on: connection) }
            lookups[name] = started
            return started
        }
        do {
            try await lookup.value
        } catch {
            lookups.withLock { if $0[name] == lookup { $0[name] = nil } }
            throw error as? DBusError ?? .closed
        }
    }

    private func lookUp(_ name: String, on connection: DBusConnection) async throws(DBusError) {
        let watch = try await connection.install(
            matchRule: "type='signal',sender='\(DBusConnection.busDaemon)',interface='\(DBusConnection.busDaemon)',member='NameOwnerChanged',arg0='\(name)'"
        ) { [weak self] signal in
            guard signal.sender == DBusConnection.busDaemon, signal.arguments.count == 3, signal.arguments[0].stringValue == name,
                  let owner = signal.arguments[2].stringValue else { return }
            self?.names.withLock { $0[name] = Followed(owner: owner.isEmpty ? nil : owner, announced: true) }
        }
        do {
            let owner = try await connection.nameOwner(of: name)
            names.withLock { if $0[name]?.announced != true { $0[name] = Followed(owner: owner) } }
        } catch .errorReply(name: "org.freedesktop.DBus.Error.NameHasNoOwner", _) {
            // No owner yet: one arrives with NameOwnerChanged.
        } catch {
            await watch.cancel()
            names.withLock { $0[name] = nil }
            throw error
        }
    }

    /// The `sender='…'` of a match rule, if it names one (bus names hold no quotes).
    static func sender(in rule: String) -> String? {
        guard let start = rule.firstRange(of: "sender='") else { return nil }
        let rest = rule[start.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }
}
