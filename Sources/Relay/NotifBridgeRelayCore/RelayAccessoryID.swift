/// An accessory's name at a relay (docs/PROTOCOL.md §11.5), in URLs and logs: 1 to 64 of A–Z,
/// a–z, 0–9, '-' and '_'. Here, beside the other relay rules, so that the relay, its store and
/// the accessory's command line check it alike.
public enum RelayAccessoryID {
    public static let maxLength = 64

    public static func validate(_ id: String) throws(RelayError) {
        guard (1...maxLength).contains(id.utf8.count),
              id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || $0 == 0x2d || $0 == 0x5f })
        else {
            throw RelayError(.malformed, "an accessory ID is 1 to \(maxLength) of A–Z, a–z, 0–9, '-' and '_'")
        }
    }
}
