import NotifBridgeDBus

/// DNS-SD through avahi-daemon's D-Bus API (org.freedesktop.Avahi on the system bus, or the bus
/// `DBUS_SYSTEM_BUS_ADDRESS` names): publishing the accessory, and browsing and resolving for
/// the simulated iPhone.
public enum Avahi {
    static let service = "org.freedesktop.Avahi"
    static let server = "org.freedesktop.Avahi.Server"
    static let entryGroup = "org.freedesktop.Avahi.EntryGroup"
    static let serviceBrowser = "org.freedesktop.Avahi.ServiceBrowser"
    /// AVAHI_IF_UNSPEC and AVAHI_PROTO_UNSPEC: every interface, IPv4 and IPv6.
    static let anyInterface: Int32 = -1
    static let anyProtocol: Int32 = -1
    /// Collisions renamed before giving up, so that a hostile peer claiming every name we pick
    /// cannot keep the accessory renaming forever.
    public static let maxRenames = 8
    /// Instances resolved while browsing; past this, further ones are ignored.
    public static let maxInstances = 64
    /// The longest one instance's resolve may take, within the browse's own time.
    static let resolveTimeout = Duration.seconds(5)

    /// The accessory's announcement, kept while the connection lives: avahi-daemon withdraws a
    /// client's records when its bus connection closes, so `withdraw()` (or the process ending)
    /// is all it takes.
    public final class Publication: Sendable {
        let connection: DBusConnection
        public let name: String

        init(connection: DBusConnection, name: String) {
            self.connection = connection
            self.name = name
        }

        public func withdraw() {
            connection.close()
        }
    }

    /// Publishes `_notifbridge._tcp` on `port` with `txt`, taking another name if this one is
    /// taken on the network.
    public static func publish(name wanted: String, port: Int, txt: NotifBridgeService.TXT, bus: DBusBusAddress = .system) async throws -> Publication {
        let connection = try await connect(bus)
        do {
            var name = NotifBridgeService.instanceName(wanted)
            let reply = try await connection.call(destination: service, path: "/", interface: server, member: "EntryGroupNew")
            guard let group = reply.first?.stringValue else { throw AvahiError("EntryGroupNew gave no object path") }
            // Only while publishing: afterwards nothing reads it, so it must not keep what comes.
            let (states, stateChanged) = AsyncStream.makeStream(of: (Int32, String).self, bufferingPolicy: .bufferingNewest(16))
            let watch = try await connection.subscribe(matchRule: "type='signal',sender='\(service)',path='\(group)',interface='\(entryGroup)',member='StateChanged'") { signal in
                guard signal.arguments.count == 2, let state = signal.arguments[0].int32Value else { return }
                stateChanged.yield((state, signal.arguments[1].stringValue ?? ""))
            }
            var iterator = states.makeAsyncIterator()
            for _ in 0...maxRenames {
                _ = try await connection.call(destination: service, path: group, interface: entryGroup, member: "AddService", arguments: [
                    .int32(anyInterface), .int32(anyProtocol), .uint32(0), .string(name), .string(NotifBridgeService.type),
                    .string(""), .string(""), .uint16(UInt16(port)), .array(element: "ay", txt.entries.map(DBusValue.bytes)),
                ])
                _ = try await connection.call(destination: service, path: group, interface: entryGroup, member: "Commit")
                // 1 registering, 2 established, 3 collision, 4 failure.
                var collided = false
                while !collided, let (state, error) = await iterator.next() {
                    if state == 2 {
                        await watch.cancel()
                        stateChanged.finish()
                        return Publication(connection: connection, name: name)
                    }
                    if state == 4 { throw AvahiError("avahi-daemon could not publish \(name): \(error)") }
                    collided = state == 3
                }
                guard collided else { throw AvahiError("avahi-daemon went away while publishing \(name)") }
                let alternative = try await connection.call(destination: service, path: "/", interface: server, member: "GetAlternativeServiceName", arguments: [.string(name)])
                name = NotifBridgeService.instanceName(alternative.first?.stringValue ?? name + " 2")
                _ = try await connection.call(destination: service, path: group, interface: entryGroup, member: "Reset")
            }
            throw AvahiError("every name tried for the accessory was taken on the network (\(maxRenames + 1) tries)")
        } catch {
            connection.close()
            throw error
        }
    }

    /// Browses for `_notifbridge._tcp` and resolves what it finds: until avahi-daemon has
    /// reported what it knows and its resolves have answered, if that found anything, else until
    /// `duration` has passed. Each instance is resolved as it is found, beside the others, so a
    /// record that never resolves holds up none of the rest.
    public static func browse(for duration: Duration, bus: DBusBusAddress = .system) async throws -> [NotifBridgeService.Instance] {
        let connection = try await connect(bus)
        defer { connection.close() }
        /// What the browse hears: avahi-daemon's signals, and the resolves' answers.
        enum Heard: Sendable {
            case item(browser: String, interface: Int32, protocol: Int32, name: String, domain: String)
            /// avahi-daemon has reported everything it knows now.
            case allForNow(browser: String)
            case resolved(NotifBridgeService.Instance?)
        }
        // Room for every item and every answer the browse takes, and one AllForNow.
        let (heard, hear) = AsyncStream.makeStream(of: Heard.self, bufferingPolicy: .bufferingOldest(2 * maxInstances + 1))
        // Subscribed before the browser exists, so that no ItemNew can be missed.
        try await connection.subscribe(matchRule: "type='signal',sender='\(service)',interface='\(serviceBrowser)'") { signal in
            let a = signal.arguments
            switch signal.member {
            case "ItemNew":
                guard a.count == 6, let interface = a[0].int32Value, let proto = a[1].int32Value, let name = a[2].stringValue, let domain = a[4].stringValue else { return }
                hear.yield(.item(browser: signal.path, interface: interface, protocol: proto, name: name, domain: domain))
            case "AllForNow":
                hear.yield(.allForNow(browser: signal.path))
            default:
                return
            }
        }
        let reply = try await connection.call(destination: service, path: "/", interface: server, member: "ServiceBrowserNew", arguments: [
            .int32(anyInterface), .int32(anyProtocol), .string(NotifBridgeService.type), .string(""), .uint32(0),
        ])
        guard let browser = reply.first?.stringValue else { throw AvahiError("ServiceBrowserNew gave no object path") }
        let deadline = ContinuousClock.now + duration
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            hear.finish()
        }
        var resolves: [Task<Void, Never>] = []
        defer {
            timer.cancel()
            for resolve in resolves { resolve.cancel() }
        }
        var instances: [NotifBridgeService.Instance] = []
        var seen: Set<String> = []
        var pending = 0
        var known = false
        for await event in heard {
            switch event {
            case .item(browser, let interface, let proto, let name, let domain):
                // The same instance is reported once per interface and protocol; one is enough.
                guard seen.count < maxInstances, seen.insert(name).inserted else { continue }
                pending += 1
                resolves.append(Task {
                    hear.yield(.resolved(await resolve(name, interface: interface, protocol: proto, domain: domain, on: connection, before: deadline)))
                })
            case .allForNow(browser):
                known = true
            case .resolved(let instance):
                pending -= 1
                if let instance { instances.append(instance) }
            case .item, .allForNow:
                continue
            }
            // Once what is known now has come and been resolved, more waiting only helps if
            // nothing was found.
            if known, pending == 0, !instances.isEmpty { break }
        }
        return instances.sorted { $0.name < $1.name }
    }

    /// One instance's host, address, port and TXT record; nil when avahi-daemon cannot say
    /// before the browse's end (or within `resolveTimeout`).
    private static func resolve(
        _ name: String, interface: Int32, protocol proto: Int32, domain: String, on connection: DBusConnection, before deadline: ContinuousClock.Instant
    ) async -> NotifBridgeService.Instance? {
        let left = deadline - .now
        guard left > .zero, let resolved = try? await connection.call(destination: service, path: "/", interface: server, member: "ResolveService", arguments: [
            .int32(interface), .int32(proto), .string(name), .string(NotifBridgeService.type), .string(domain), .int32(proto), .uint32(0),
        ], timeout: min(resolveTimeout, left)), resolved.count == 11,
            let host = resolved[5].stringValue, let address = resolved[7].stringValue, let port = resolved[8].uint16Value
        else { return nil }
        let entries: [[UInt8]] = if case .array(_, let values) = resolved[9] { values.compactMap(\.bytesValue) } else { [] }
        return NotifBridgeService.Instance(
            name: name, hostName: host, address: address, port: Int(port),
            txt: Result { () throws(ServiceRecordError) -> NotifBridgeService.TXT in try NotifBridgeService.TXT(entries: entries) }
        )
    }

    private static func connect(_ bus: DBusBusAddress) async throws -> DBusConnection {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: bus)
        } catch {
            throw AvahiError("no system bus to reach avahi-daemon: \(error)")
        }
        do {
            _ = try await connection.call(destination: service, path: "/", interface: server, member: "GetVersionString", timeout: .seconds(5))
        } catch {
            connection.close()
            throw AvahiError("avahi-daemon does not answer on the system bus (is it installed and running?): \(error)")
        }
        return connection
    }
}

public struct AvahiError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
