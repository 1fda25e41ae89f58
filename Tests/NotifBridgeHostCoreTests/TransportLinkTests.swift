import Foundation
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeWire
import Testing

/// The transport extension's link: resume, bind, relay; never a key exchange of its own.
@Suite("Transport extension link")
struct TransportLinkTests {
    static let resume = SecurityRelay.Resume(keyID: Data(repeating: 7, count: 8), exchangeID: 0x0102_0304_0506_0708)
    static let session = SimulatorIdentity.sessionID

    private static func confirm(_ exchangeID: UInt64, resumed: Bool) -> LinkMessage {
        var message = LinkMessage()
        message.keyConfirm = .with { $0.exchangeID = exchangeID; $0.resumed = resumed }
        return message
    }

    @Test("Resumes the agreed exchange, binds the feature, then carries Sealed both ways")
    func resumeAndRelay() throws {
        var link = TransportLink(sessionID: Self.session, resume: Self.resume)
        let hello = link.connected(maxChunkLength: 182)
        guard case .send(let message) = try #require(hello.first) else { Issue.record("no Hello"); return }
        #expect(message.hello.resume.exchangeID == Self.resume.exchangeID)
        #expect(message.hello.maxChunkLength == 182)
        let outbound = TransportMessage(sessionID: Self.session, data: Data([1, 2]))
        #expect(throws: AccessoryMessageError.transportUnavailable) { try link.outbound(outbound) }

        let actions = link.received(Self.confirm(Self.resume.exchangeID, resumed: true))
        #expect(actions.count == 2 && actions.last == .ready)
        #expect(link.isReady)
        #expect(try link.outbound(outbound).sealed.ciphertext == Data([1, 2]))

        var sealed = LinkMessage()
        sealed.sealed = .with { $0.featureRef = TransportRelay.notificationsRef; $0.ciphertext = Data([9]) }
        #expect(link.received(sealed) == [.deliver(TransportMessage(sessionID: Self.session, data: Data([9])))])

        link.linkClosed()
        #expect(!link.isReady)
        #expect(throws: AccessoryMessageError.transportUnavailable) { try link.outbound(outbound) }
    }

    @Test("Without an agreed exchange it sends nothing and asks for keys")
    func noExchange() {
        var link = TransportLink(sessionID: Self.session, resume: nil)
        guard case .keysNeeded = link.connected(maxChunkLength: 182).first else {
            Issue.record("expected keysNeeded")
            return
        }
        link.exchangeAgreed(Self.resume)
        guard case .send = link.connected(maxChunkLength: 182).first else {
            Issue.record("expected a Hello once an exchange is agreed")
            return
        }
    }

    @Test("A KeyOffer or Resync instead of the resumption: keys needed, nothing bound", arguments: [true, false])
    func keysNeeded(offer: Bool) {
        var link = TransportLink(sessionID: Self.session, resume: Self.resume)
        _ = link.connected(maxChunkLength: 182)
        var message = LinkMessage()
        if offer { message.keyOffer = .with { $0.cipherSuite = "XWing" } } else { message.resync = .with { $0.reason = .decryptFailed } }
        guard case .keysNeeded = link.received(message).first else {
            Issue.record("expected keysNeeded")
            return
        }
        #expect(!link.isReady)
    }

    @Test("A KeyConfirm that is not a resumption of the agreed exchange binds nothing")
    func otherConfirm() {
        var link = TransportLink(sessionID: Self.session, resume: Self.resume)
        _ = link.connected(maxChunkLength: 182)
        #expect(link.received(Self.confirm(Self.resume.exchangeID, resumed: false)).isEmpty)
        #expect(!link.isReady)
        guard case .close = link.received(Self.confirm(99, resumed: true)).first else {
            Issue.record("a resumption of an exchange this host never agreed closes the link")
            return
        }
    }

    @Test("Sealed before binding, and host-only messages, close the link")
    func protocolViolations() {
        var link = TransportLink(sessionID: Self.session, resume: Self.resume)
        var sealed = LinkMessage()
        sealed.sealed = .with { $0.featureRef = 1 }
        guard case .close = link.received(sealed).first else { Issue.record("expected close"); return }
        var hello = LinkMessage()
        hello.hello = .with { $0.protocolVersion = 1 }
        guard case .close = link.received(hello).first else { Issue.record("expected close"); return }
    }
}
