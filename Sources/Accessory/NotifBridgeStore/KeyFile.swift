import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The accessory's private key on disk: one file per suite, mode 0600, written atomically.
/// The key is generated here, on the accessory, and this file is the only place it is kept.
public struct KeyFile: AccessoryKeyStore {
    public let path: String

    public var location: String { path }

    public init(directory: String, suite: CipherSuite) {
        path = (directory as NSString).appendingPathComponent("identity-\(suite.rawValue.lowercased()).key")
    }

    private struct Contents: Codable {
        var format: Int
        var suite: CipherSuite
        var secret: Data
    }

    public enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case wrongSuite(path: String, found: CipherSuite, expected: CipherSuite)
        case insecurePermissions(path: String, mode: UInt16)
        case writeFailed(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "key file \(path) cannot be used: \(reason)"
            case .wrongSuite(let path, let found, let expected): "key file \(path) holds a \(found.rawValue) key, expected \(expected.rawValue)"
            case .insecurePermissions(let path, let mode): "key file \(path) has mode \(String(mode, radix: 8)); it must be 600 (chmod 600 \(path))"
            case .writeFailed(let path, let reason): "cannot write key file \(path): \(reason)"
            }
        }
    }

    /// A key file is about a hundred bytes of JSON.
    public static let maxFileLength = 4096
    /// The only layout this accessory writes and reads.
    static let format = 1

    /// The key, or nil when there is none yet. Anything else at the path is refused and left as
    /// it is, never replaced by a new key: a symbolic link whose target is missing (a volume not
    /// mounted yet) as much as a damaged file.
    public func load(_ suite: CipherSuite) throws -> AccessoryPrivateKey? {
        var link = stat()
        guard lstat(path, &link) == 0 else {
            if errno == ENOENT { return nil }
            throw Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = errno == ENOENT
                ? "it is a symbolic link to \((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "a path"), which does not exist (a volume not mounted?); restore it, or remove the link and a new key is made"
                : String(cString: strerror(errno))
            throw Failure.unreadable(path: path, reason: reason)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure.unreadable(path: path, reason: info.st_mode & S_IFMT == S_IFDIR ? "it is a directory, not a file" : "it is not a regular file")
        }
        let mode = UInt16(info.st_mode & 0o777)
        guard mode & 0o077 == 0 else { throw Failure.insecurePermissions(path: path, mode: mode) }
        let bytes: Data
        do {
            bytes = try fileContents(path, limit: Self.maxFileLength)
        } catch {
            throw Failure.unreadable(path: path, reason: error.description)
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: bytes)
        } catch {
            throw Failure.unreadable(path: path, reason: "not a NotifBridge key file (\(Self.mistake(error)))")
        }
        guard contents.format == Self.format else {
            throw Failure.unreadable(path: path, reason: "format \(contents.format) is not one this accessory reads (\(Self.format))")
        }
        guard contents.suite == suite else { throw Failure.wrongSuite(path: path, found: contents.suite, expected: suite) }
        do {
            return try AccessoryPrivateKey(suite: suite, secretRepresentation: contents.secret)
        } catch {
            throw Failure.unreadable(path: path, reason: "its secret is not a \(suite.rawValue) key (\(contents.secret.count) bytes)")
        }
    }

    /// A decoding error in the file's terms: which key is missing or wrong, not Swift's types.
    private static func mistake(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _): "no \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" is not valid"
        default: "not JSON"
        }
    }

    /// Replaces the key file atomically (``DurableFile/replace(_:with:)``): a power cut must not
    /// bring back the old key (or no key) after the accessory has told the iPhone about the new one.
    public func save(_ key: AccessoryPrivateKey) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(Contents(format: 1, suite: key.suite, secret: key.secretRepresentation))
        do {
            try DurableFile.replace(path, with: bytes)
        } catch {
            throw Failure.writeFailed(path: error.path, reason: error.reason)
        }
    }
}
