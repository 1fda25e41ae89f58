import Crypto
import Foundation

/// Where AES-GCM nonces come from: the system's secure random generator unless a caller (a test,
/// a golden-vector writer) injects another source. The cores take one, so they own no randomness.
public struct NonceSource: Sendable {
    private let make: @Sendable () -> [UInt8]

    public init(_ make: @escaping @Sendable () -> [UInt8]) {
        self.make = make
    }

    /// Random nonces from swift-crypto (BoringSSL's generator, seeded by the system). Twelve
    /// `UInt8.random` calls were twelve getrandom(2) calls, a tenth of a receipt's cost.
    public static let system = NonceSource { Array(AES.GCM.Nonce()) }

    public func next() -> [UInt8] { make() }
}

/// AES-256-GCM as the platform uses it: `nonce(12) ‖ ciphertext ‖ tag(16)`, no AAD.
public enum FeatureCipher {
    public static let nonceLength = 12
    public static let tagLength = 16
    /// Bytes a sealed message adds to its plaintext.
    public static let overhead = nonceLength + tagLength

    /// Seals under a nonce from `nonces` (the system's random generator by default).
    public static func seal(
        _ plaintext: some DataProtocol,
        using key: SymmetricKey,
        nonces: NonceSource = .system
    ) throws(CryptoError) -> Data {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: try AES.GCM.Nonce(data: nonces.next()))
            guard let combined = box.combined else {
                throw CryptoError(.sealFailed, "AES-GCM produced no combined form")
            }
            return combined
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError(.sealFailed, "AES-GCM seal failed: \(error)")
        }
    }

    public static func open(_ combined: some DataProtocol, using key: SymmetricKey) throws(CryptoError) -> Data {
        guard combined.count >= overhead else {
            throw CryptoError(.decryptFailed, "ciphertext of \(combined.count) bytes is shorter than nonce and tag (\(overhead))")
        }
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key)
        } catch {
            throw CryptoError(.decryptFailed, "AES-GCM authentication failed")
        }
    }
}
