/// Reads one Data Source reply incrementally. A reply declares no total length: its end is known
/// only from the request it answers (its CommandID, UID or AppIdentifier, then one
/// `ID(1) ‖ Length(2, LE) ‖ value` per requested attribute), so the parser is built from that
/// request and told when bytes run out. A reply may span many GATT notifications.
struct ANCSReplyParser: Sendable {
    /// What the reply must start with, after its CommandID.
    enum Subject: Sendable, Equatable {
        case notification(uid: UInt32)
        case app(identifier: [UInt8])
    }

    /// How long a requested attribute's value may be, and what happens past it.
    struct Cap: Sendable {
        var maxBytes: Int
        /// Title, subtitle and message: a phone that overruns the requested maximum is cut to it.
        /// Other attributes have no requested maximum, so overrunning `maxBytes` fails the reply.
        var truncates: Bool
    }

    private enum State: Sendable {
        case command
        case uid(collected: [UInt8])
        case appIdentifier(matched: Int)
        case attributeID
        case length(id: UInt8, low: UInt8?)
        case value(id: UInt8, remaining: Int)
        case done
    }

    let command: ANCSCommandID
    let subject: Subject
    private let caps: [UInt8: Cap]
    private let maxReplyBytes: Int
    private var state = State.command
    private var consumed = 0
    private(set) var values: [UInt8: [UInt8]] = [:]

    init(command: ANCSCommandID, subject: Subject, caps: [UInt8: Cap], maxReplyBytes: Int) {
        self.command = command
        self.subject = subject
        self.caps = caps
        self.maxReplyBytes = maxReplyBytes
    }

    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Reads bytes from `bytes` until the reply is complete or they run out; returns how many it
    /// read. Throws on bytes no reply to this request could hold.
    mutating func feed(_ bytes: ArraySlice<UInt8>) throws(ANCSError) -> Int {
        var index = bytes.startIndex
        while index < bytes.endIndex, !isComplete {
            if case .value(let id, let remaining) = state {
                // Values move in bulk: they are most of a reply.
                let take = min(remaining, bytes.endIndex - index)
                try count(take)
                let keep = max(0, min(take, caps[id]!.maxBytes - values[id]!.count))
                values[id]!.append(contentsOf: bytes[index..<index + keep])
                index += take
                state = remaining == take ? afterAttribute() : .value(id: id, remaining: remaining - take)
                continue
            }
            try count(1)
            try step(bytes[index])
            index += 1
        }
        return index - bytes.startIndex
    }

    private mutating func count(_ bytes: Int) throws(ANCSError) {
        consumed += bytes
        guard consumed <= maxReplyBytes else {
            throw ANCSError(.tooLarge, "data source reply passes maxDataSourceReplyBytes \(maxReplyBytes)")
        }
    }

    private mutating func step(_ byte: UInt8) throws(ANCSError) {
        switch state {
        case .command:
            guard byte == command.rawValue else {
                throw ANCSError(.unexpectedReply, "reply with CommandID \(byte) while awaiting \(command.rawValue)")
            }
            switch subject {
            case .notification: state = .uid(collected: [])
            case .app: state = .appIdentifier(matched: 0)
            }
        case .uid(var collected):
            collected.append(byte)
            guard collected.count == 4 else {
                state = .uid(collected: collected)
                return
            }
            let uid = ANCSBytes.uint32(collected[...])
            guard case .notification(let expected) = subject, uid == expected else {
                throw ANCSError(.unexpectedReply, "reply for NotificationUID \(uid), not the one requested")
            }
            state = afterAttribute()
        case .appIdentifier(let matched):
            guard case .app(let expected) = subject else { return }
            if matched == expected.count {
                guard byte == 0 else { throw ANCSError(.unexpectedReply, "reply for another AppIdentifier") }
                state = afterAttribute()
            } else {
                guard byte == expected[matched] else { throw ANCSError(.unexpectedReply, "reply for another AppIdentifier") }
                state = .appIdentifier(matched: matched + 1)
            }
        case .attributeID:
            guard caps[byte] != nil else { throw ANCSError(.malformed, "reply holds attribute \(byte), which was not requested") }
            guard values[byte] == nil else { throw ANCSError(.malformed, "reply repeats attribute \(byte)") }
            state = .length(id: byte, low: nil)
        case .length(let id, let low):
            guard let low else {
                state = .length(id: id, low: byte)
                return
            }
            let length = Int(low) | Int(byte) << 8
            let cap = caps[id]!
            guard length <= cap.maxBytes || cap.truncates else {
                throw ANCSError(.tooLarge, "attribute \(id) of \(length) bytes; the limit is \(cap.maxBytes)")
            }
            values[id] = []
            state = length == 0 ? afterAttribute() : .value(id: id, remaining: length)
        case .value, .done:
            break
        }
    }

    /// The next attribute, or the end once every requested one has arrived.
    private func afterAttribute() -> State {
        values.count == caps.count ? .done : .attributeID
    }
}
