import Foundation
import NotifBridgeCrypto
import NotifBridgeWire

/// The accessory's side of messages that come over the internet (docs/PROTOCOL.md §10): bytes
/// from the relay in, the `HostEvent` to store with the ratchet changes to save beside it out.
///
/// Opening moves the ratchet in memory at once, so that the next message in the same batch sees
/// it; the store saves the changes in the batch's transaction. Until the caller says how that
/// went, the inbox keeps the state from before the batch: `committed()` drops it, `rolledBack()`
/// returns to it, so a failed commit never leaves memory ahead of the disk (the relay redelivers
/// what was not acknowledged, and those messages must open again).
public struct InternetInbox: Sendable {
    public private(set) var ratchet: ReceivingRatchet
    public let keyID: [UInt8]
    public let exchangeID: UInt64
    /// The largest message accepted: the largest plaintext a Bluetooth link takes, plus the
    /// ratchet's header, nonce and tag. Checked before anything is parsed.
    public let maxMessageLength: Int
    private var beforeBatch: ReceivingRatchet?

    public init(ratchet: ReceivingRatchet, keyID: [UInt8], exchangeID: UInt64, maxPlaintextLength: Int = WireLimits.defaultMaxMessageLength) {
        self.ratchet = ratchet
        self.keyID = keyID
        self.exchangeID = exchangeID
        maxMessageLength = maxPlaintextLength + InternetRatchet.minimumMessageLength
    }

    public enum Outcome: Sendable {
        /// Authentic and valid: store the event and save the changes in one transaction, then
        /// acknowledge the message to the relay.
        case deliver(HostEvent, changes: ReceivingRatchet.Changes, messageIndex: UInt32)
        /// Authentic (its key is spent) but not a valid event: it can never become one, so save
        /// the changes and acknowledge it, storing nothing.
        case discard(WireError, changes: ReceivingRatchet.Changes, messageIndex: UInt32)
        /// Not opened; nothing changed. Acknowledge it too: a relay that redelivered it would get
        /// the same answer forever.
        case refuse(Refusal)
    }

    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public enum Code: String, Sendable {
            case tooLarge, malformed, unknownKeyID, replayed, tooFarAhead, decryptFailed
        }

        public var code: Code
        public var detail: String
        public var description: String { "\(code.rawValue): \(detail)" }
    }

    public mutating func receive(_ bytes: some Collection<UInt8>) -> Outcome {
        guard bytes.count <= maxMessageLength else {
            return .refuse(Refusal(code: .tooLarge, detail: "a message of \(bytes.count) bytes is over the limit of \(maxMessageLength)"))
        }
        let message: RatchetMessage
        let opened: (plaintext: Data, changes: ReceivingRatchet.Changes)
        do {
            message = try RatchetMessage(parsing: Data(bytes))
            // A refused message leaves the ratchet as it was, so it is opened in place: a copy per
            // message would copy up to 50,000 kept keys. The state before the batch is kept once.
            let saved = beforeBatch == nil ? ratchet : nil
            opened = try ratchet.openRecordingChanges(message, keyID: keyID)
            if let saved { beforeBatch = saved }
        } catch {
            return .refuse(Refusal(code: Self.code(error.code), detail: error.detail))
        }
        do {
            let event = try WireCodec.decode(HostEvent.self, from: opened.plaintext)
            try AccessorySession.validate(event)
            return .deliver(event, changes: opened.changes, messageIndex: message.messageIndex)
        } catch {
            return .discard(error, changes: opened.changes, messageIndex: message.messageIndex)
        }
    }

    /// The batch's transaction committed: its changes are on disk.
    public mutating func committed() {
        beforeBatch = nil
    }

    /// The batch's transaction failed: back to the state on disk.
    public mutating func rolledBack() {
        if let saved = beforeBatch { ratchet = saved }
        beforeBatch = nil
    }

    private static func code(_ code: RatchetError.Code) -> Refusal.Code {
        switch code {
        case .malformed: .malformed
        case .unknownKeyID: .unknownKeyID
        case .replayed: .replayed
        case .tooFarAhead: .tooFarAhead
        case .decryptFailed: .decryptFailed
        case .exhausted: .malformed
        }
    }
}
