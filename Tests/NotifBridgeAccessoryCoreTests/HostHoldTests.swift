import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// `HostSession.hold`, the internet's way in: what it takes, the next link carries again, so it
/// takes only what fits that link.
@Suite("The host's events held for the internet")
struct HostHoldTests {
    static let limit = 4096

    /// A connected pair whose accessory takes messages of at most `limit` bytes.
    static func connected() throws -> BackToBack {
        var pair = try BackToBack(limits: WireLimits(maxMessageLength: limit))
        pair.connect()
        return pair
    }

    static let now = Date(timeIntervalSince1970: 1_778_490_000)

    /// The largest body whose first event fits `limit` on a link, by `send` (a binary search,
    /// each probe on a fresh pair, so the sequence number's length stays the same).
    static func largestFittingBody() throws -> Int {
        var (low, high) = (1, limit)
        while low < high {
            let middle = (low + high + 1) / 2
            var pair = try connected()
            if (try? pair.host.send(.add(note(middle), .standard), now: now)) != nil { low = middle } else { high = middle - 1 }
        }
        return low
    }

    static func note(_ bodyLength: Int) -> HostNotification {
        HostNotification(source: "s", id: "n", sourceName: "S", body: String(repeating: "b", count: bodyLength))
    }

    @Test("An event held for the internet must fit the link that carries it again: the largest that does, and one byte more")
    func heldFitsLink() throws {
        let largest = try Self.largestFittingBody()
        #expect(largest > 3000 && largest < Self.limit)
        var pair = try Self.connected()
        #expect(throws: AccessoryError.self) { try pair.host.hold(.add(Self.note(largest + 1), .standard), now: Self.now) }
        let held = try pair.host.hold(.add(Self.note(largest), .standard), now: Self.now)
        // The refused one used no number.
        #expect(held.sequence == 1)
    }
}
