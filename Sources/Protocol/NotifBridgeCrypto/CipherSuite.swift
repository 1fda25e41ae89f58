import Crypto
import Foundation

/// The HPKE suites iOS offers for notification forwarding (apple-api §6.2).
///
/// The raw values are the suite names devices were observed to put into HPKE `info`. The decrypt
/// path never uses them: it uses the strings carried in `KeyMaterial`, exactly as received.
public enum CipherSuite: String, Sendable, Hashable, CaseIterable, Codable {
    /// ML-KEM-768 + X25519, HKDF-SHA256, AES-256-GCM. Required on local-network and internet links.
    case xWing = "XWing"
    /// DHKEM(P-256), HKDF-SHA256, AES-256-GCM. A Bluetooth-only fallback.
    case p256 = "P256"

    /// Recognises a suite name as iOS describes it. Apple's pages spell it "xWing"/"p256" and
    /// devices were seen sending "XWing"/"P256", so the match ignores case.
    public init?(wireName: String) {
        switch wireName.lowercased() {
        case "xwing": self = .xWing
        case "p256": self = .p256
        default: return nil
        }
    }

    public var hpkeCiphersuite: HPKE.Ciphersuite {
        switch self {
        case .xWing: .XWingMLKEM768X25519_SHA256_AES_GCM_256
        case .p256: .P256_SHA256_AES_GCM_256
        }
    }

    /// Public key bytes as offered: X-Wing raw key, or P-256 raw X‖Y.
    public var publicKeyLength: Int {
        switch self {
        case .xWing: 1216
        case .p256: 64
        }
    }

    /// Encapsulated key bytes: X-Wing ciphertext, or an uncompressed P-256 point.
    public var encapsulatedKeyLength: Int {
        switch self {
        case .xWing: 1120
        case .p256: 65
        }
    }

    /// The version name observed on devices ("Version1", spelled out).
    public static let versionName = "Version1"
}

/// Why a key exchange or a sealed message was refused. Never carries key or plaintext bytes.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case unsupportedSuite
        case suiteMismatch
        case invalidKey
        case invalidEncapsulatedKey
        case decryptFailed
        case sealFailed
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}

/// The first 8 bytes of SHA-256 over `bytes`: short, stable identifiers for keys and exchanges.
public func shortDigest(_ bytes: some DataProtocol) -> [UInt8] {
    Array(SHA256.hash(data: bytes).prefix(8))
}
