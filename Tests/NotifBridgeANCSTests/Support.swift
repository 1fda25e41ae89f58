import NotifBridgeANCS

/// SplitMix64: a small seeded generator, so a failing random run can be repeated exactly.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Bytes written as hex, spaces allowed: `"00 01 ff"`.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter(\.isHexDigit))
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

func le32(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

/// `ID ‖ Length(LE) ‖ value`, as a Data Source reply holds each attribute.
func attribute(_ id: UInt8, _ value: [UInt8]) -> [UInt8] {
    [id, UInt8(value.count & 0xFF), UInt8(value.count >> 8)] + value
}

func attribute(_ id: UInt8, _ value: String) -> [UInt8] {
    attribute(id, Array(value.utf8))
}

/// A GetNotificationAttributes reply in the order the client asks: app id, title, subtitle,
/// message, date, positive and negative labels.
func notificationReply(uid: UInt32, app: String, title: String = "", subtitle: String = "", message: String = "", date: String = "",
                       positive: String = "", negative: String = "") -> [UInt8] {
    [0] + le32(uid) + attribute(0, app) + attribute(1, title) + attribute(2, subtitle) + attribute(3, message)
        + attribute(5, date) + attribute(6, positive) + attribute(7, negative)
}

func appReply(_ app: String, name: String) -> [UInt8] {
    [1] + Array(app.utf8) + [0] + attribute(0, name)
}

func sourceEvent(_ event: ANCSEventID, uid: UInt32, flags: ANCSEventFlags = [], category: ANCSCategory = .social) -> [UInt8] {
    ANCSNotificationSourceEvent(eventID: event, flags: flags, category: category, categoryCount: 1, uid: uid).bytes
}

extension [ANCSClient.Action] {
    var writes: [[UInt8]] {
        compactMap { if case .writeControlPoint(let bytes) = $0 { bytes } else { nil } }
    }

    var notifications: [ANCSNotification] {
        compactMap {
            switch $0 {
            case .added(let notification), .modified(let notification): notification
            default: nil
            }
        }
    }

    var refusals: [String] {
        compactMap { if case .refused(let reason) = $0 { reason } else { nil } }
    }
}

/// Drives a client against a simulated phone, carrying Control Point writes to the server and
/// its replies back in Data Source pieces of at most `mtu` bytes.
struct Link {
    var client: ANCSClient
    var server: ANCSServer
    var now = ContinuousClock.now
    var reported: [ANCSClient.Action] = []
    var performed: [(UInt32, ANCSActionID)] = []

    init(client: ANCSClient = ANCSClient(), server: ANCSServer) {
        self.client = client
        self.server = server
    }

    mutating func carry(_ actions: [ANCSClient.Action], mtu: (inout Link) -> Int = { _ in 20 }) {
        var pending = actions
        while !pending.isEmpty {
            let action = pending.removeFirst()
            guard case .writeControlPoint(let bytes) = action else {
                reported.append(action)
                continue
            }
            switch server.handleControlPoint(bytes) {
            case .dataSource(let reply):
                var rest = reply[...]
                while !rest.isEmpty {
                    let piece = rest.prefix(Swift.max(1, mtu(&self)))
                    rest = rest.dropFirst(piece.count)
                    pending += client.receivedDataSource(Array(piece), now: now)
                }
            case .performed(let uid, let action):
                performed.append((uid, action))
                pending += client.tick(now: now)
            case .error(let error):
                pending += client.controlPointWriteFailed(error.description, now: now)
            }
        }
    }
}
