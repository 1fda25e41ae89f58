import Crypto
import Foundation

/// The accessory's HPKE private key. It is generated on the accessory and never leaves it; only
/// `publicKeyRepresentation` is ever sent.
public enum AccessoryPrivateKey: Sendable {
    case xWing(XWingMLKEM768X25519.PrivateKey)
    case p256(P256.KeyAgreement.PrivateKey)

    /// A new key from the system's secure random generator.
    public static func generate(_ suite: CipherSuite) throws(CryptoError) -> AccessoryPrivateKey {
        switch suite {
        case .xWing:
            do {
                return .xWing(try XWingMLKEM768X25519.PrivateKey.generate())
            } catch {
                throw CryptoError(.invalidKey, "X-Wing key generation failed: \(error)")
            }
        case .p256:
            return .p256(P256.KeyAgreement.PrivateKey())
        }
    }

    /// Restores a key from `secretRepresentation` (the 32-byte X-Wing seed or P-256 scalar).
    public init(suite: CipherSuite, secretRepresentation: some ContiguousBytes & DataProtocol) throws(CryptoError) {
        guard secretRepresentation.count == 32 else {
            throw CryptoError(.invalidKey, "\(suite.rawValue) secret must be 32 bytes, got \(secretRepresentation.count)")
        }
        do {
            switch suite {
            case .xWing:
                self = .xWing(try XWingMLKEM768X25519.PrivateKey(seedRepresentation: secretRepresentation, publicKey: nil))
            case .p256:
                self = .p256(try P256.KeyAgreement.PrivateKey(rawRepresentation: secretRepresentation))
            }
        } catch {
            throw CryptoError(.invalidKey, "\(suite.rawValue) secret does not form a key: \(error)")
        }
    }

    public var suite: CipherSuite {
        switch self {
        case .xWing: .xWing
        case .p256: .p256
        }
    }

    /// The 32 bytes from which the key is restored. Only the key file ever holds them.
    public var secretRepresentation: Data {
        switch self {
        case .xWing(let key): key.seedRepresentation
        case .p256(let key): key.rawRepresentation
        }
    }

    /// The public key as offered to iOS.
    public var publicKeyRepresentation: Data {
        switch self {
        case .xWing(let key): key.publicKey.rawRepresentation
        case .p256(let key): key.publicKey.rawRepresentation
        }
    }

    /// `KeyOffer.key_id`: names this key without revealing anything about it.
    public var keyID: [UInt8] { shortDigest(publicKeyRepresentation) }
}
