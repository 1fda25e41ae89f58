import Crypto
import Foundation

/// What iOS sends back for the accessory's public key (`SecurityMessage` with `.encapsulatedKey`),
/// kept verbatim: the strings go into HPKE `info` exactly as received.
public struct KeyExchangeParameters: Sendable, Hashable, Codable {
    public var cipherSuite: String
    public var version: String
    public var identifier: String
    public var encapsulatedKey: Data

    public init(cipherSuite: String, version: String, identifier: String, encapsulatedKey: Data) {
        self.cipherSuite = cipherSuite
        self.version = version
        self.identifier = identifier
        self.encapsulatedKey = encapsulatedKey
    }

    /// `"<cipherSuite>-<version>-<identifier>"`, the HPKE info (ARCHITECTURE.md, Layers 2).
    public var infoString: String { "\(cipherSuite)-\(version)-\(identifier)" }

    /// Names this exchange: the first 8 bytes of SHA-256(encapsulated key), big-endian.
    public var exchangeID: UInt64 {
        shortDigest(encapsulatedKey).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The export context for one feature and direction:
    /// `"<info>-HostToAccessory-<featureID>"` or `"<info>-AccessoryToHost-<featureID>"`.
    public func exportContext(featureID: String, direction: Direction) -> String {
        "\(infoString)-\(direction.rawValue)-\(featureID)"
    }
}

/// Which way a sealed message travels; each direction has its own key.
public enum Direction: String, Sendable, Hashable, CaseIterable {
    case hostToAccessory = "HostToAccessory"
    case accessoryToHost = "AccessoryToHost"
}

/// The two AES-256-GCM keys of one feature (one transport session UUID).
public struct FeatureKeys: Sendable {
    public var hostToAccessory: SymmetricKey
    public var accessoryToHost: SymmetricKey

    public func key(for direction: Direction) -> SymmetricKey {
        switch direction {
        case .hostToAccessory: hostToAccessory
        case .accessoryToHost: accessoryToHost
        }
    }

    /// The exported secret itself, for golden vectors and their tests only.
    public func rawBytes(for direction: Direction) -> Data {
        key(for: direction).withUnsafeBytes { Data($0) }
    }

    /// Exports both directions' 32-byte secrets from an HPKE context.
    static func export(
        parameters: KeyExchangeParameters,
        featureID: String,
        using export: (Data) throws -> SymmetricKey
    ) throws(CryptoError) -> FeatureKeys {
        do {
            return FeatureKeys(
                hostToAccessory: try export(Data(parameters.exportContext(featureID: featureID, direction: .hostToAccessory).utf8)),
                accessoryToHost: try export(Data(parameters.exportContext(featureID: featureID, direction: .accessoryToHost).utf8))
            )
        } catch {
            throw CryptoError(.invalidKey, "secret export failed: \(error)")
        }
    }
}

/// The accessory's side of one completed key exchange: the HPKE recipient context from which
/// per-feature keys are exported. Both directions come from this one recipient.
public struct RecipientSession: Sendable {
    public let parameters: KeyExchangeParameters
    public let suite: CipherSuite
    private let recipient: HPKE.Recipient
    private var cache: [String: FeatureKeys] = [:]

    /// Builds the recipient context, refusing material that does not fit the accessory's key.
    public init(privateKey: AccessoryPrivateKey, parameters: KeyExchangeParameters) throws(CryptoError) {
        guard let suite = CipherSuite(wireName: parameters.cipherSuite) else {
            throw CryptoError(.unsupportedSuite, "cipher suite \"\(parameters.cipherSuite)\" is not XWing or P256")
        }
        guard suite == privateKey.suite else {
            throw CryptoError(.suiteMismatch, "material is for \(parameters.cipherSuite) but the offered key is \(privateKey.suite.rawValue)")
        }
        guard parameters.encapsulatedKey.count == suite.encapsulatedKeyLength else {
            throw CryptoError(.invalidEncapsulatedKey, "\(suite.rawValue) encapsulated key must be \(suite.encapsulatedKeyLength) bytes, got \(parameters.encapsulatedKey.count)")
        }
        do {
            recipient = try Self.makeRecipient(privateKey: privateKey, ciphersuite: suite.hpkeCiphersuite, info: Data(parameters.infoString.utf8), encapsulatedKey: parameters.encapsulatedKey)
        } catch {
            throw CryptoError(.invalidEncapsulatedKey, "HPKE recipient setup failed: \(error)")
        }
        self.parameters = parameters
        self.suite = suite
    }

    /// The one place a recipient context is built; RFC 9180 and X-Wing vectors test it directly.
    static func makeRecipient(privateKey: AccessoryPrivateKey, ciphersuite: HPKE.Ciphersuite, info: Data, encapsulatedKey: Data) throws -> HPKE.Recipient {
        switch privateKey {
        case .xWing(let key):
            try HPKE.Recipient(privateKey: key, ciphersuite: ciphersuite, info: info, encapsulatedKey: encapsulatedKey)
        case .p256(let key):
            try HPKE.Recipient(privateKey: key, ciphersuite: ciphersuite, info: info, encapsulatedKey: encapsulatedKey)
        }
    }

    /// The feature's keys, exported once and cached for every later message.
    public mutating func featureKeys(featureID: String) throws(CryptoError) -> FeatureKeys {
        if let cached = cache[featureID] { return cached }
        let recipient = self.recipient
        let keys = try FeatureKeys.export(parameters: parameters, featureID: featureID) {
            try recipient.exportSecret(context: $0, outputByteCount: 32)
        }
        cache[featureID] = keys
        return keys
    }

    /// The internet transport's chain keys (one pair for every feature), from the same context.
    public func internetChainKeys(bluetoothUUID: String) throws(CryptoError) -> InternetChainKeys {
        let recipient = self.recipient
        return try InternetChainKeys.export(bluetoothUUID: bluetoothUUID) { try recipient.exportSecret(context: $0, outputByteCount: 32) }
    }
}

/// The iOS system's side (HPKE sender), used by the simulated iPhone.
public struct SenderSession: Sendable {
    public let parameters: KeyExchangeParameters
    private let sender: HPKE.Sender
    private var cache: [String: FeatureKeys] = [:]

    /// Encapsulates to the accessory's offered key. `identifier` is what iOS would supply: the
    /// accessory's Bluetooth identifier.
    public init(
        suite: CipherSuite,
        version: String = CipherSuite.versionName,
        accessoryPublicKey: Data,
        identifier: String
    ) throws(CryptoError) {
        guard accessoryPublicKey.count == suite.publicKeyLength else {
            throw CryptoError(.invalidKey, "\(suite.rawValue) public key must be \(suite.publicKeyLength) bytes, got \(accessoryPublicKey.count)")
        }
        let info = Data("\(suite.rawValue)-\(version)-\(identifier)".utf8)
        do {
            switch suite {
            case .xWing:
                let key = try XWingMLKEM768X25519.PublicKey(rawRepresentation: accessoryPublicKey)
                sender = try HPKE.Sender(recipientKey: key, ciphersuite: suite.hpkeCiphersuite, info: info)
            case .p256:
                let key = try P256.KeyAgreement.PublicKey(rawRepresentation: accessoryPublicKey)
                sender = try HPKE.Sender(recipientKey: key, ciphersuite: suite.hpkeCiphersuite, info: info)
            }
        } catch {
            throw CryptoError(.invalidKey, "HPKE sender setup failed: \(error)")
        }
        parameters = KeyExchangeParameters(
            cipherSuite: suite.rawValue,
            version: version,
            identifier: identifier,
            encapsulatedKey: sender.encapsulatedKey
        )
    }

    public mutating func featureKeys(featureID: String) throws(CryptoError) -> FeatureKeys {
        if let cached = cache[featureID] { return cached }
        let sender = self.sender
        let keys = try FeatureKeys.export(parameters: parameters, featureID: featureID) {
            try sender.exportSecret(context: $0, outputByteCount: 32)
        }
        cache[featureID] = keys
        return keys
    }

    public func internetChainKeys(bluetoothUUID: String) throws(CryptoError) -> InternetChainKeys {
        let sender = self.sender
        return try InternetChainKeys.export(bluetoothUUID: bluetoothUUID) { try sender.exportSecret(context: $0, outputByteCount: 32) }
    }
}

/// Lowercase hex, the form key ids and vectors are written in.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// An exchange ID as 16 hex digits, the form logs and displays use.
public func exchangeHex(_ exchangeID: UInt64) -> String {
    let digits = String(exchangeID, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
