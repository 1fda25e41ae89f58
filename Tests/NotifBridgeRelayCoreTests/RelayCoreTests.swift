import Foundation
import NotifBridgeCrypto
import NotifBridgeRelayCore
import NotifBridgeTestSupport
import NotifBridgeWire
import Testing

@Suite("Relay frames, tokens and admission")
struct RelayFrameTests {
    @Test("Frames in bytes, as PROTOCOL.md §11.2 shows them")
    func bytes() throws {
        #expect(RelayFrame.ack(seq: 0x0102).encoded() == [0x02, 0x02, 0x01, 0, 0, 0, 0, 0, 0])
        #expect(RelayFrame.deliver(seq: 1, message: [0xAA, 0xBB]).encoded() == [0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0xAA, 0xBB])
        for frame in [RelayFrame.ack(seq: .max), .deliver(seq: 7, message: Array(repeating: 5, count: 300))] {
            #expect(try RelayFrame(decoding: frame.encoded()) == frame)
        }
    }

    @Test("Refused frames, each named", arguments: [
        ([UInt8](), RelayError.Code.malformed), (Array(repeating: 2, count: 8), .malformed),
        ([1, 1, 0, 0, 0, 0, 0, 0, 0], .malformed), ([2, 1, 0, 0, 0, 0, 0, 0, 0, 9], .malformed),
        ([3, 1, 0, 0, 0, 0, 0, 0, 0], .malformed), ([4, 1, 0, 0, 0, 0, 0, 0, 0], .malformed),
        ([4, 1, 0, 0, 0, 0, 0, 0, 0, 5], .malformed), ([4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], .malformed),
        ([5, 1, 0, 0, 0, 0, 0, 0, 0], .malformed),
    ])
    func refused(bytes: [UInt8], code: RelayError.Code) {
        do {
            let frame = try RelayFrame(decoding: bytes)
            Issue.record("\(bytes) decoded as \(frame)")
        } catch {
            #expect(error.code == code)
        }
    }

    /// The frame parser reads what a peer sends on both sides of the inbox (the accessory's acks
    /// and pushes at the relay, the relay's deliveries at the accessory), and has no libFuzzer
    /// harness. Seeded random frames, mostly near a real type and its lengths, each read from the
    /// middle of a larger buffer: what decodes encodes back to the same bytes, and nothing traps.
    @Test("Random frames, read from a slice: whatever decodes encodes back to the same bytes", arguments: [UInt64(1), 2, 3])
    func randomFrames(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let limits = RelayLimits(maxMessageLength: 64)
        var decoded = 0
        for _ in 0..<20_000 {
            let length = Bool.random(using: &random) ? Int.random(in: 8...11, using: &random) : Int.random(in: 0...(RelayFrame.headerLength + 66), using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if !bytes.isEmpty, Int.random(in: 0..<4, using: &random) > 0 { bytes[0] = UInt8.random(in: 0...5, using: &random) }
            if bytes.count == RelayFrame.headerLength + 1, bytes[0] == 4 { bytes[9] %= 6 }
            let padded = [0xEE, 0xEE] + bytes + [0xEE]
            let slice = padded[2..<(2 + bytes.count)]
            guard let frame = try? RelayFrame(decoding: slice, limits: limits) else { continue }
            decoded += 1
            #expect(frame.encoded() == bytes, "\(bytes) decoded as \(frame)")
        }
        #expect(decoded > 1_000, "too few inputs decoded to test the round trip: \(decoded)")
    }

    @Test("Push and pushed in bytes, as PROTOCOL.md §11.2 shows them; a push body of 4,096 bytes is taken, 4,097 refused")
    func pushFrames() throws {
        #expect(RelayFrame.push(id: 1, body: Array("{}".utf8)).encoded() == [0x03, 1, 0, 0, 0, 0, 0, 0, 0, 0x7B, 0x7D])
        #expect(RelayFrame.pushed(id: 5, status: .tryLater).encoded() == [0x04, 5, 0, 0, 0, 0, 0, 0, 0, 3])
        for status in RelayFrame.PushStatus.allCases {
            #expect(try RelayFrame(decoding: RelayFrame.pushed(id: 9, status: status).encoded()) == .pushed(id: 9, status: status))
        }
        let atLimit = RelayFrame.push(id: 2, body: Array(repeating: 0x20, count: RelayFrame.maxPushBodyLength))
        #expect(try RelayFrame(decoding: atLimit.encoded()) == atLimit)
        #expect(throws: RelayError.self) { try RelayFrame(decoding: atLimit.encoded() + [0x20]) }
    }

    @Test("A message of maxMessageLength is a frame; one byte more is refused before it is copied")
    func frameLengthBoundary() throws {
        let limits = RelayLimits(maxMessageLength: 64)
        let atLimit = RelayFrame.deliver(seq: 1, message: Array(repeating: 1, count: 64)).encoded()
        #expect(try RelayFrame(decoding: atLimit, limits: limits) == .deliver(seq: 1, message: Array(repeating: 1, count: 64)))
        do {
            _ = try RelayFrame(decoding: atLimit + [1], limits: limits)
            Issue.record("a frame over the limit was taken")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test("The default message limit takes the largest message an accessory opens over the internet")
    func defaultFitsTheAccessory() {
        #expect(RelayLimits().maxMessageLength == WireLimits.defaultMaxMessageLength + InternetRatchet.minimumMessageLength)
    }

    @Test("Tokens: 43 base64url characters from 32 random bytes, kept as a digest, compared whole")
    func tokens() throws {
        var random = SeededGenerator(seed: 7)
        let token = try RelayToken(randomBytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        #expect(token.text.count == 43)
        #expect(token.text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(RelayToken.matches(token.text, stored: token.digest))
        let oneCharacterOff = String(token.text.dropLast()) + (token.text.last == "A" ? "B" : "A")
        #expect(!RelayToken.matches(oneCharacterOff, stored: token.digest))
        #expect(!RelayToken.matches("", stored: token.digest))
        #expect(!RelayToken.matches(token.text, stored: Array(token.digest.dropLast())))
        #expect(token.digest != Array(token.text.utf8))
        for count in [31, 33] {
            #expect(throws: RelayError.self) { try RelayToken(randomBytes: Array(repeating: 0, count: count)) }
        }
    }

    /// Boundary pairs at every admission limit: the limit is taken, one past it is refused.
    @Test("Admission at each limit and one past it", arguments: [
        (length: 100, messages: 0, bytes: 0, expected: nil as RelayError.Code?),
        (101, 0, 0, .tooLarge),
        (0, 0, 0, .malformed), (35, 0, 0, .malformed), (36, 0, 0, nil),
        (36, 2, 0, nil), (36, 3, 0, .queueFull),
        (100, 0, 400, nil), (101, 0, 400, .tooLarge), (100, 0, 401, .queueFull),
    ])
    func admission(length: Int, messages: Int, bytes: Int, expected: RelayError.Code?) {
        let limits = RelayLimits(maxMessageLength: 100, maxQueuedMessages: 3, maxQueuedBytes: 500, timeToLive: .seconds(60))
        let now = Date(timeIntervalSince1970: 1_000)
        do {
            let expires = try RelayAdmission.admit(length: length, to: .init(messages: messages, bytes: bytes), now: now, limits: limits)
            #expect(expected == nil)
            #expect(expires == now.addingTimeInterval(60))
        } catch {
            #expect(error.code == expected)
        }
    }
}
