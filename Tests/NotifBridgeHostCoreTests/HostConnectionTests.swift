import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

@Suite("The phone's connection: chunks in, chunks out, no IO")
struct HostConnectionTests {
    /// Both connection types back to back, at the smallest chunk length the protocol allows, so
    /// every message of the exchange spans several chunks each way.
    @Test("A key exchange and an event cross between HostConnection and AccessoryConnection in minimal chunks", arguments: CipherSuite.allCases)
    func backToBack(suite: CipherSuite) throws {
        let chunkLength = WireLimits.minChunkLength
        var accessory = AccessoryConnection(
            session: AccessorySession(identity: try AccessoryPrivateKey.generate(suite), exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth])),
            chunkLength: chunkLength, now: .now
        )
        var phone = HostConnection(
            session: HostSession(configuration: .init(suites: [suite], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID)),
            chunkLength: chunkLength
        )
        var delivered: [AccessorySession.Delivery] = []
        var toAccessory = phone.step { $0.connected(maxChunkLength: chunkLength) }
        var rounds = 0
        var sent = false
        while rounds < 20 {
            rounds += 1
            var toPhone: [[UInt8]] = []
            for case .write(let chunks, _) in toAccessory {
                #expect(chunks.allSatisfy { $0.count <= chunkLength })
                for chunk in chunks {
                    for action in accessory.received(chunk: chunk, now: .now) {
                        switch action {
                        case .send(let transmission): toPhone += transmission.chunks
                        case .deliver(let delivery): delivered.append(delivery)
                        default: break
                        }
                    }
                }
            }
            toAccessory = []
            for chunk in toPhone { toAccessory += try phone.received(chunk: chunk, now: .now) }
            if phone.session.isEstablished, !sent {
                sent = true
                toAccessory += phone.step { session in
                    (try? session.send(.add(HostNotification(source: "s", id: "n1", sourceName: "S", body: "b"), .standard), now: Date()).actions) ?? []
                }
            }
            if toAccessory.isEmpty { break }
        }
        #expect(phone.session.isEstablished)
        #expect(delivered.map(\.event.sequence) == [1])
    }

    @Test("Bytes that do not decode are thrown as a WireError, not swallowed")
    func undecodable() {
        var phone = HostConnection(
            session: HostSession(configuration: .init(suites: [.xWing], identifier: SimulatorIdentity.accessoryIdentifier, sessionID: SimulatorIdentity.sessionID)),
            chunkLength: 64
        )
        var framer = ChunkFramer(chunkLength: 64)
        let garbage = framer.frame([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: WireError.self) {
            for chunk in garbage { _ = try phone.received(chunk: chunk, now: .now) }
        }
    }
}
