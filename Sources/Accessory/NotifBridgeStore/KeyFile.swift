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

    public func load(_ suite: CipherSuite) throws -> AccessoryPrivateKey? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        let mode = UInt16(info.st_mode & 0o777)
        guard mode & 0o077 == 0 else { throw Failure.insecurePermissions(path: path, mode: mode) }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw Failure.unreadable(path: path, reason: "not a NotifBridge key file (\(error))")
        }
        guard contents.suite == suite else { throw Failure.wrongSuite(path: path, found: contents.suite, expected: suite) }
        do {
            return try AccessoryPrivateKey(suite: suite, secretRepresentation: contents.secret)
        } catch {
            throw Failure.unreadable(path: path, reason: error.description)
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
