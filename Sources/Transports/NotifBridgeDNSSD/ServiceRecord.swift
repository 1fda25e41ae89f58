/// What NotifBridge puts in DNS-SD and how the simulated iPhone reads it back (docs/PROTOCOL.md
/// §2.3). Pure: the Avahi client carries the bytes. Anyone on the network can publish a record
/// of this type, so everything read back is checked against a named limit first.
public enum NotifBridgeService {
    public static let type = "_notifbridge._tcp"
    /// The TXT `v` value this build speaks.
    public static let protocolVersion = 1
    /// DNS-SD instance names are one DNS label.
    public static let maxNameBytes = 63
    /// TXT entries read from one record; ours has two.
    public static let maxTXTEntries = 16
    /// One TXT entry is a DNS character string.
    public static let maxTXTEntryBytes = 255
    public static let keyIDLength = 8

    /// The TXT record: `v=<protocol version>` and `key=<key ID, 16 hex digits>`.
    public struct TXT: Sendable, Hashable {
        public var protocolVersion: Int
        public var keyID: [UInt8]

        public init(protocolVersion: Int = NotifBridgeService.protocolVersion, keyID: [UInt8]) {
            self.protocolVersion = protocolVersion
            self.keyID = keyID
        }

        public var entries: [[UInt8]] {
            [Array("v=\(protocolVersion)".utf8), Array("key=\(keyID.map { hex($0) }.joined())".utf8)]
        }

        /// Reads a record someone published; unknown keys are skipped, ours must be well formed.
        public init(entries: [[UInt8]]) throws(ServiceRecordError) {
            guard entries.count <= NotifBridgeService.maxTXTEntries else {
                throw ServiceRecordError("the TXT record has \(entries.count) entries; at most \(NotifBridgeService.maxTXTEntries) are read")
            }
            var version: Int?
            var keyID: [UInt8]?
            for entry in entries {
                guard entry.count <= NotifBridgeService.maxTXTEntryBytes else {
                    throw ServiceRecordError("a TXT entry of \(entry.count) bytes is longer than \(NotifBridgeService.maxTXTEntryBytes)")
                }
                guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = entry[..<equals], value = entry[(equals + 1)...]
                if key.elementsEqual("v".utf8) {
                    guard (1...3).contains(value.count), value.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(String(decoding: value, as: UTF8.self)) else {
                        throw ServiceRecordError("TXT v is not a protocol version (1 to 3 digits)")
                    }
                    version = number
                } else if key.elementsEqual("key".utf8) {
                    guard value.count == 2 * NotifBridgeService.keyIDLength, let bytes = Self.parseHex(Array(value)) else {
                        throw ServiceRecordError("TXT key is not \(2 * NotifBridgeService.keyIDLength) hex digits")
                    }
                    keyID = bytes
                }
            }
            guard let version else { throw ServiceRecordError("the TXT record has no v (protocol version)") }
            guard let keyID else { throw ServiceRecordError("the TXT record has no key (key ID)") }
            self.init(protocolVersion: version, keyID: keyID)
        }

        private static func parseHex(_ digits: [UInt8]) -> [UInt8]? {
            var bytes: [UInt8] = []
            var index = 0
            while index + 1 < digits.count {
                guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
                bytes.append(high << 4 | low)
                index += 2
            }
            return bytes
        }

        private static func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            case 0x41...0x46: digit - 0x41 + 10
            default: nil
            }
        }

        private func hex(_ byte: UInt8) -> String {
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }
    }

    /// One resolved instance.
    public struct Instance: Sendable, Hashable {
        public var name: String
        public var hostName: String
        public var address: String
        public var port: Int
        /// nil with the reason when the TXT record is not ours or not readable.
        public var txt: Result<TXT, ServiceRecordError>

        public init(name: String, hostName: String, address: String, port: Int, txt: Result<TXT, ServiceRecordError>) {
            self.name = name
            self.hostName = hostName
            self.address = address
            self.port = port
            self.txt = txt
        }
    }

    /// The instance the iPhone connects to: the first (by name) that speaks this protocol and
    /// matches the name or key ID asked for.
    public static func choose(_ instances: [Instance], name: String? = nil, keyID: [UInt8]? = nil) -> Instance? {
        instances.sorted { $0.name < $1.name }.first { instance in
            guard case .success(let txt) = instance.txt, txt.protocolVersion == protocolVersion else { return false }
            return (name.map { $0 == instance.name } ?? true) && (keyID.map { $0 == txt.keyID } ?? true)
        }
    }

    /// An instance name that fits one DNS label, cut at a character boundary.
    public static func instanceName(_ wanted: String) -> String {
        var name = ""
        for character in wanted where !character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            guard name.utf8.count + String(character).utf8.count <= maxNameBytes else { break }
            name.append(character)
        }
        return name.isEmpty ? "NotifBridge" : name
    }
}

public struct ServiceRecordError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
