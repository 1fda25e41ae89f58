import Crypto
import Foundation

/// AES-256-GCM as the platform uses it: `nonce(12) ‖ ciphertext ‖ tag(16)`, no AAD.
public enum FeatureCipher {
    public static let nonceLength = 12
    public static let tagLength = 16
    /// Bytes a sealed message adds to its plaintext.
    public static let overhead = nonceLength + tagLength

    /// Seals with a fresh random nonce unless one is injected (tests and golden vectors).
    public static func seal(
        _ plaintext: some DataProtocol,
        using key: SymmetricKey,
        nonce: AES.GCM.Nonce = AES.GCM.Nonce()
    ) throws(CryptoError) -> Data {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce)
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
