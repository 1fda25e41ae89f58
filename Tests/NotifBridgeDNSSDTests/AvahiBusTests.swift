import NotifBridgeDBus
import NotifBridgeDBusTestSupport
import Synchronization
import Testing
@testable import NotifBridgeDNSSD

/// Browsing against a stand-in for avahi-daemon on a private bus.
@Suite(
    "DNS-SD browsing on a private bus",
    .enabled(if: PrivateBusDaemon.isAvailable, "dbus-daemon is not installed; skipping the bus tests"),
    .timeLimit(.minutes(1))
)
struct AvahiBusTests {
    /// avahi-daemon's side: a browser that reports `names` at once, and resolves that never
    /// answer (held, not dropped: a dropped reply would fail the call at once).
    final class FakeAvahi: Sendable {
        final class Record: Sendable {
            let held = Mutex<[DeferredReply]>([])
            let resolves = Mutex(0)
        }

        let bus: DBusConnection
        let record = Record()

        init(address: DBusBusAddress, names: [String]) async throws {
            bus = try await DBusConnection.connect(to: address)
            try await bus.requestName(Avahi.service)
            let browser = "/Client1/ServiceBrowser1"
            let record = self.record, bus = self.bus
            try await bus.exportObject(at: "/") { call in
                switch call.member {
                case "GetVersionString":
                    return .values([.string("avahi 0.8")])
                case "ServiceBrowserNew":
                    Task {
                        for name in names {
                            try? await bus.emit(DBusSignal(path: browser, interface: Avahi.serviceBrowser, member: "ItemNew", arguments: [
                                .int32(2), .int32(0), .string(name), .string(NotifBridgeService.type), .string("local"), .uint32(0),
                            ]))
                        }
                        try? await bus.emit(DBusSignal(path: browser, interface: Avahi.serviceBrowser, member: "AllForNow"))
                    }
                    return .values([.objectPath(browser)])
                case "ResolveService":
                    record.resolves.withLock { $0 += 1 }
                    if call.arguments.count > 2, call.arguments[2].stringValue == AvahiBusTests.kitchen {
                        // interface, protocol, name, type, domain, host, aprotocol, address, port, txt, flags
                        return .values([
                            .int32(2), .int32(0), .string(AvahiBusTests.kitchen), .string(NotifBridgeService.type), .string("local"),
                            .string("kitchen.local"), .int32(0), .string("10.0.0.7"), .uint16(7420),
                            .array(element: "ay", [.bytes(Array("v=1".utf8)), .bytes(Array("key=0102030405060708".utf8))]), .uint32(0),
                        ])
                    }
                    if let reply = call.deferredReply { record.held.withLock { $0.append(reply) } }
                    return .deferred
                default:
                    return .notHandled
                }
            }
        }
    }

    static let kitchen = "Kitchen display"

    /// A record that never resolves cost each of them a resolve's whole timeout (5 s), after
    /// the browse's own time: 66 such names held a 2 s discovery for five and a half minutes.
    /// Resolved one after another, the first such name would hide every accessory behind it.
    @Test("Names that never resolve: the browse ends at its time, and finds the accessory announced after them", arguments: [false, true])
    func unresolvable(withAccessory: Bool) async throws {
        let daemon = try PrivateBusDaemon()
        defer { daemon.stop() }
        let strangers = (0..<(Avahi.maxInstances + 6)).map { "stranger \($0)" }
        let avahi = try await FakeAvahi(address: daemon.address, names: withAccessory ? Array(strangers.prefix(10)) + [Self.kitchen] : strangers)
        defer { avahi.bus.close() }
        // Room for a busy test run to deliver the eleven names; the old code took 5 s a name.
        let time = Duration.seconds(withAccessory ? 3 : 1)
        let start = ContinuousClock.now
        let found = try await Avahi.browse(for: time, bus: daemon.address)
        let elapsed = ContinuousClock.now - start
        #expect(found.map(\.name) == (withAccessory ? [Self.kitchen] : []))
        #expect(found.first.map { "\($0.address):\($0.port)" } == (withAccessory ? "10.0.0.7:7420" : nil))
        #expect(elapsed < time + .seconds(10), "\(elapsed)")
        #expect((1...Avahi.maxInstances).contains(avahi.record.resolves.withLock { $0 }), "at most the instances a browse takes are resolved")
    }
}
