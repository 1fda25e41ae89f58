import Crypto
import Foundation

/// Apple's internet transport: after the key exchange, both sides export one pair of 32-byte
/// chain keys for every feature, and each direction runs its own symmetric ratchet. Every
/// message is sealed under a fresh message key; the receiver keeps the keys of messages that
/// have not arrived yet, within a bound, and deletes each key when it is used.
/// docs/PROTOCOL.md §10 is the byte-level contract and has a worked example.
public enum InternetRatchet {
    /// `keyID(4) ‖ messageIndex(4, little-endian)` before the sealed box.
    public static let headerLength = 8
    public static let keyIDLength = 4
    public static let chainKeyLength = 32
    /// The message keys a receiver holds for messages that may still arrive (Apple's figure).
    /// A message further ahead than this is refused; the oldest keys go first when it is full.
    public static let maxSkippedKeys = 50_000
    /// The shortest message: header, nonce and tag around an empty plaintext.
    public static let minimumMessageLength = headerLength + FeatureCipher.overhead

    /// `"AccessoryInternetKey-<direction>-<bluetoothUUID>"`, exported from the same HPKE context
    /// as the Bluetooth feature keys, once for all features.
    public static func exportContext(bluetoothUUID: String, direction: Direction) -> String {
        "AccessoryInternetKey-\(direction.rawValue)-\(bluetoothUUID)"
    }

    /// The first 4 bytes of SHA-384 over the accessory's raw public key: tells a receiver which
    /// key exchange a message belongs to. Not the same digest as `AccessoryPrivateKey.keyID`.
    public static func keyID(publicKey: some DataProtocol) -> [UInt8] {
        Array(SHA384.hash(data: publicKey).prefix(keyIDLength))
    }

    /// One step: `HKDF-SHA256-Expand(chainKey, "AccessoryTransportSecurity-RatchetKeys-" ‖
    /// LE32(index), 64)`; the first 32 bytes are the message key, the last 32 the next chain key.
    public static func step(chainKey: SymmetricKey, index: UInt32) -> (messageKey: SymmetricKey, nextChainKey: SymmetricKey) {
        let output = HKDF<SHA256>.expand(pseudoRandomKey: chainKey, info: stepInfo(index: index), outputByteCount: 64)
        return output.withUnsafeBytes { bytes in
            (SymmetricKey(data: bytes.prefix(32)), SymmetricKey(data: bytes.suffix(32)))
        }
    }

    /// The same step on plain bytes, for vectors and tests.
    public static func step(chainKey: Data, index: UInt32) -> (messageKey: Data, nextChainKey: Data) {
        let (messageKey, next) = step(chainKey: SymmetricKey(data: chainKey), index: index)
        return (messageKey.withUnsafeBytes { Data($0) }, next.withUnsafeBytes { Data($0) })
    }

    /// The HKDF info of step `index`.
    public static func stepInfo(index: UInt32) -> [UInt8] {
        var info = Array("AccessoryTransportSecurity-RatchetKeys-".utf8)
        withUnsafeBytes(of: index.littleEndian) { info.append(contentsOf: $0) }
        return info
    }
}

/// The two chain keys an exchange exports for the internet transport: the starting points of
/// the host → accessory and accessory → host ratchets.
public struct InternetChainKeys: Sendable {
    public var hostToAccessory: Data
    public var accessoryToHost: Data

    public init(hostToAccessory: Data, accessoryToHost: Data) {
        self.hostToAccessory = hostToAccessory
        self.accessoryToHost = accessoryToHost
    }

    public func chainKey(for direction: Direction) -> Data {
        switch direction {
        case .hostToAccessory: hostToAccessory
        case .accessoryToHost: accessoryToHost
        }
    }

    static func export(bluetoothUUID: String, using export: (Data) throws -> SymmetricKey) throws(CryptoError) -> InternetChainKeys {
        func bytes(_ direction: Direction) throws -> Data {
            try export(Data(InternetRatchet.exportContext(bluetoothUUID: bluetoothUUID, direction: direction).utf8)).withUnsafeBytes { Data($0) }
        }
        do {
            return InternetChainKeys(hostToAccessory: try bytes(.hostToAccessory), accessoryToHost: try bytes(.accessoryToHost))
        } catch {
            throw CryptoError(.invalidKey, "internet key export failed: \(error)")
        }
    }
}

/// Why a ratchet refused a message or a state. Each is final for that message; none changes the
/// ratchet, so a forged or damaged message costs a receiver nothing but the attempt.
public struct RatchetError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// Too short, or a chain key of the wrong length.
        case malformed
        /// The key ID names another key exchange.
        case unknownKeyID
        /// The index was used already, or its key was dropped to keep the bound.
        case replayed
        /// More than `maxSkippedKeys` ahead of the next expected index.
        case tooFarAhead
        /// AES-GCM did not authenticate it under the index's key.
        case decryptFailed
        /// The sender has used every index of its chain; a new key exchange is needed.
        case exhausted
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}

/// A message on the internet transport: `keyID(4) ‖ LE32(messageIndex) ‖ nonce(12) ‖ ct ‖ tag(16)`.
public struct RatchetMessage: Sendable, Hashable {
    public var keyID: [UInt8]
    public var messageIndex: UInt32
    /// `nonce ‖ ciphertext ‖ tag`, as `FeatureCipher` seals.
    public var sealed: Data

    public init(keyID: [UInt8], messageIndex: UInt32, sealed: Data) {
        self.keyID = keyID
        self.messageIndex = messageIndex
        self.sealed = sealed
    }

    public init(parsing bytes: some DataProtocol) throws(RatchetError) {
        let bytes = Array(bytes)
        guard bytes.count >= InternetRatchet.minimumMessageLength else {
            throw RatchetError(.malformed, "a ratchet message is at least \(InternetRatchet.minimumMessageLength) bytes, got \(bytes.count)")
        }
        keyID = Array(bytes[0..<4])
        messageIndex = bytes[4..<8].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        sealed = Data(bytes[8...])
    }

    public var serialized: Data {
        var data = Data(keyID)
        withUnsafeBytes(of: messageIndex.littleEndian) { data.append(contentsOf: $0) }
        data.append(sealed)
        return data
    }
}

/// The sending half of one direction. Sealing moves it past the index it used, and the caller
/// must persist it **before** transmitting: a sender that crashed after sending and before
/// saving would seal its next message under a key already spent.
public struct SendingRatchet: Sendable {
    public private(set) var chainKey: SymmetricKey
    public private(set) var nextIndex: UInt32

    public init(chainKey: some DataProtocol, nextIndex: UInt32 = 0) throws(RatchetError) {
        guard chainKey.count == InternetRatchet.chainKeyLength else {
            throw RatchetError(.malformed, "a chain key is \(InternetRatchet.chainKeyLength) bytes, got \(chainKey.count)")
        }
        self.chainKey = SymmetricKey(data: Array(chainKey))
        self.nextIndex = nextIndex
    }

    /// The chain key's bytes, for a sender to persist.
    public var chainKeyBytes: Data { chainKey.withUnsafeBytes { Data($0) } }

    public mutating func seal(_ plaintext: some DataProtocol, keyID: [UInt8], nonces: NonceSource = .system) throws(RatchetError) -> RatchetMessage {
        // The last index is never used, so that the receiver's next index always fits in 32 bits.
        guard nextIndex < .max else {
            throw RatchetError(.exhausted, "every message index of this chain has been used; a new key exchange is needed")
        }
        let (messageKey, next) = InternetRatchet.step(chainKey: chainKey, index: nextIndex)
        let sealed: Data
        do {
            sealed = try FeatureCipher.seal(plaintext, using: messageKey, nonces: nonces)
        } catch {
            throw RatchetError(.malformed, "sealing failed: \(error)")
        }
        let message = RatchetMessage(keyID: keyID, messageIndex: nextIndex, sealed: sealed)
        chainKey = next
        nextIndex += 1
        return message
    }
}
