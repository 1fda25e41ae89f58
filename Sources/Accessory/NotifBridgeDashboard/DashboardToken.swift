import Crypto
import Foundation
import NotifBridgeCrypto
import NotifBridgeFiles

/// The secret every dashboard request carries (a cookie set from it, or `Authorization: Bearer`):
/// 32 random bytes as hex, made on first use and kept in a 0600 file in the state directory, so
/// whoever can read the key and the store can open the dashboard, and nobody else.
public struct DashboardToken: Sendable, Equatable {
    public let value: String

    public static let fileName = "dashboard-token"
    static let hexLength = 64

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The token file holds 64 hex digits and a line break; anything much longer is not one.
    static let maxFileLength = 256

    /// Loads the token from `directory/dashboard-token`, making it if the file does not exist.
    /// A file whose permissions let others read it is tightened to 0600 (`tightened` says so).
    /// Only a regular file of its own is used: a symbolic link is refused, not followed, so that
    /// neither the chmod nor the read reaches a file elsewhere.
    public static func loadOrCreate(in directory: String) throws -> (token: DashboardToken, tightened: Bool) {
        let path = (directory as NSString).appendingPathComponent(fileName)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            let token = DashboardToken(value: SymmetricKey(size: .bits256).withUnsafeBytes { hexString($0) })
            try DurableFile.replace(path, with: Data((token.value + "\n").utf8))
            return (token, false)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw Failure(description: "\(path) is a symbolic link; the token must be a file of its own (remove the link, and a new token is made)")
        default: throw Failure(description: "\(path) is not a regular file; remove it, and a new token is made")
        }
        let mode = UInt16(info.st_mode & 0o777)
        var tightened = false
        if mode & 0o077 != 0 {
            guard chmod(path, 0o600) == 0 else {
                throw Failure(description: "\(path) can be read by others (mode \(String(mode, radix: 8))) and cannot be changed to 0600")
            }
            tightened = true
        }
        let text: String
        do {
            text = String(decoding: try fileContents(path, limit: maxFileLength), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw Failure(description: "cannot read \(path): \(error)")
        }
        guard text.utf8.count == hexLength, text.utf8.allSatisfy({ hexDigits.contains($0) }) else {
            throw Failure(description: "\(path) does not hold \(hexLength) lowercase hex digits; delete it and a new token is made")
        }
        return (DashboardToken(value: text), tightened)
    }

    init(value: String) {
        self.value = value
    }

    /// Compares in time that does not depend on where the first difference is.
    func matches(_ candidate: Substring) -> Bool {
        let given = Array(candidate.utf8)
        let expected = Array(value.utf8)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static let hexDigits = Set("0123456789abcdef".utf8)
}
