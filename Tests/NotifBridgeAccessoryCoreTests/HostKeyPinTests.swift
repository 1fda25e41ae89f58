import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// `HostSession.requiredAccessoryKeyID`: a link told which key it must reach (a DNS-SD record's,
/// which anyone on the network can publish) seals nothing to any other, not even the events
/// that were waiting for the link.
@Suite("The host's key pin")
struct HostKeyPinTests {
    static func flipped(_ keyID: [UInt8]) -> Data {
        var other = Data(keyID)
        other[other.startIndex] ^= 0x01
        return other
    }

    @Test("A KeyOffer of the key asked for is answered; of any other, the link closes with nothing sent", arguments: [true, false])
    func offer(matching: Bool) throws {
        var pair = try BackToBack()
        let keyID = pair.accessory.identity.keyID
        pair.host.requiredAccessoryKeyID = matching ? Data(keyID) : Self.flipped(keyID)
        // Queued before the link: establishing sends it.
        try pair.send(.add(HostNotification(source: "s", id: "n1", sourceName: "S", body: "b"), .standard))
        pair.connect()
        let closes = pair.hostActions.compactMap { if case .close(let reason) = $0 { reason } else { nil } }
        if matching {
            #expect(closes.isEmpty, "\(closes)")
            #expect(pair.deliveries.count == 1)
        } else {
            #expect(closes.count == 1)
            #expect(closes.first?.contains("is not the one asked for") == true, "\(closes)")
            #expect(!pair.host.isEstablished)
            #expect(!pair.accessoryActions.contains { if case .persistExchange = $0 { true } else { false } }, "KeyMaterial reached the accessory")
            #expect(pair.deliveries.isEmpty)
        }
    }

    /// The phone holds an exchange made (without a pin) with another key: a pinned link does
    /// not ask to resume it, so the accessory offers its key, which is refused before anything
    /// is sent. The exchange itself is kept for links that are not pinned to another key.
    @Test("A link pinned to another key does not ask to resume the exchange it holds")
    func noResumeOfAnotherKey() throws {
        var pair = try BackToBack()
        pair.connect()
        pair.host.requiredAccessoryKeyID = Self.flipped(pair.accessory.identity.keyID)
        pair.hostActions = []
        pair.deliveries = []
        pair.host.disconnected()
        // Held while there is no link: a resumed exchange would send it.
        try pair.send(.add(HostNotification(source: "s", id: "held", sourceName: "S", body: "b"), .standard))
        pair.reconnect()
        #expect(!pair.accessoryActions.contains { if case .resumedExchange = $0 { true } else { false } })
        let closes = pair.hostActions.compactMap { if case .close(let reason) = $0 { reason } else { nil } }
        #expect(closes.count == 1 && closes[0].contains("is not the one asked for"), "\(pair.hostActions)")
        #expect(!pair.host.isEstablished)
        #expect(pair.deliveries.isEmpty, "an event was sealed to the accessory")
        #expect(pair.host.pairing != nil, "the exchange with the other key is kept")
    }

    /// Should a resume for another key be confirmed anyway (the pin set after the Hello went),
    /// the confirmation is refused before anything is sent.
    @Test("A resumed exchange made with another key is refused when confirmed")
    func resumedConfirmRefused() throws {
        var pair = try BackToBack()
        pair.connect()
        pair.linkUp = false
        pair.reconnect()
        pair.linkUp = true
        let hello = pair.host.connected(maxChunkLength: 4096)
        pair.host.requiredAccessoryKeyID = Self.flipped(pair.accessory.identity.keyID)
        pair.hostActions = []
        pair.deliveries = []
        try pair.send(.add(HostNotification(source: "s", id: "held", sourceName: "S", body: "b"), .standard))
        pair.pumpHost(hello)
        #expect(pair.accessoryActions.contains { if case .resumedExchange = $0 { true } else { false } }, "the accessory resumed")
        #expect(pair.hostActions.contains { if case .close = $0 { true } else { false } }, "\(pair.hostActions)")
        #expect(!pair.host.isEstablished)
        #expect(pair.deliveries.isEmpty, "an event was sealed to the resumed exchange")
    }

    /// The refused offer's own terms (here its maximum message length) are not taken either:
    /// a rogue could otherwise leave the phone unable to send anything to the real accessory.
    @Test("An offer refused by the pin changes nothing the session keeps")
    func refusedOfferTakesNothing() throws {
        var pair = try BackToBack(limits: WireLimits(maxMessageLength: 1300))
        pair.host.requiredAccessoryKeyID = Self.flipped(pair.accessory.identity.keyID)
        pair.connect()
        #expect(pair.hostActions.contains { if case .close = $0 { true } else { false } })
        let body = String(repeating: "b", count: 2000)
        #expect(throws: Never.self) { try pair.send(.add(HostNotification(source: "s", id: "n1", sourceName: "S", body: body), .standard)) }
    }
}
