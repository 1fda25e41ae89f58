import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire

/// The internet transport's receiving ratchet (docs/PROTOCOL.md §10): thread CPU time to open one
/// typical notification in order, out of order (each batch of 64 delivered backwards, so most
/// open with a kept key), and a forgery the full 50,000 steps ahead: the first, and once the
/// receiver has walked that stretch.
func ratchetReport() throws {
    var event = HostEvent()
    event.sequence = 1
    event.event = try DataProvider.event(for: SampleNotifications.typical(index: 1), now: Date())
    let plaintext = WireCodec.encode(event)
    let chainKey = Data(repeating: 0x5a, count: 32)
    let keyID: [UInt8] = [1, 2, 3, 4]
    var sender = try SendingRatchet(chainKey: chainKey)
    let messages = try (0..<count).map { _ in try sender.seal(plaintext, keyID: keyID) }

    func timeOpening(_ order: [RatchetMessage]) throws -> [Duration] {
        var receiver = try ReceivingRatchet(chainKey: chainKey)
        return try order.map { message in
            let start = threadCPUTime()
            _ = try receiver.open(message, keyID: keyID)
            return threadCPUTime() - start
        }
    }
    let backwards = stride(from: 0, to: messages.count, by: 64).flatMap { messages[$0..<min($0 + 64, messages.count)].reversed() }

    var skipping = try SendingRatchet(chainKey: chainKey)
    var farMessage: RatchetMessage?
    for _ in 0...InternetRatchet.maxSkippedKeys { farMessage = try skipping.seal(plaintext, keyID: keyID) }
    var forged = farMessage!
    forged.sealed[forged.sealed.count - 1] ^= 1
    var farAhead: [Duration] = []
    var forgedAgain: [Duration] = []
    for _ in 0..<5 {
        var receiver = try ReceivingRatchet(chainKey: chainKey)
        var start = threadCPUTime()
        _ = try? receiver.open(forged, keyID: keyID)
        farAhead.append(threadCPUTime() - start)
        start = threadCPUTime()
        _ = try? receiver.open(forged, keyID: keyID)
        forgedAgain.append(threadCPUTime() - start)
    }
    print("internet ratchet, \(plaintext.count)-byte plaintext, \(count) messages, thread CPU time to open one:")
    print("  in order: \(summary(try timeOpening(messages)))")
    print("  each 64 backwards: \(summary(try timeOpening(backwards)))")
    print("  a forgery \(InternetRatchet.maxSkippedKeys) ahead, the first (5 runs): \(summary(farAhead))")
    print("  the same forgery again, from the nearest checkpoint (5 runs): \(summary(forgedAgain))")
}
