import Foundation
import NotifBridgeHostCore
import NotifBridgeWire

extension HostEvent {
    /// The event the simulated iPhone's data provider makes for `operation`, numbered `sequence`.
    static func test(_ sequence: UInt64, _ operation: HostOperation, now: Date = Date(timeIntervalSince1970: 1_778_490_000)) throws -> HostEvent {
        var event = HostEvent()
        event.sequence = sequence
        event.event = try DataProvider.event(for: operation, now: now)
        return event
    }
}
