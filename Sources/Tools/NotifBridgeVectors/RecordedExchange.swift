import Foundation
import NotifBridgeCrypto

extension KeyExchangeParameters {
    /// The exchange a vector file recorded, from its encapsulated key: the accessory's side
    /// derives the same keys from it, so regenerating the file needs no new encapsulation.
    static func recorded(_ suite: CipherSuite, identifier: String, encapsulatedKey text: String) throws -> KeyExchangeParameters {
        guard let encapsulatedKey = Hex.bytes(text) else {
            throw VectorError("the recorded \(suite.rawValue) encapsulatedKey is not hex")
        }
        return KeyExchangeParameters(cipherSuite: suite.rawValue, version: CipherSuite.versionName, identifier: identifier, encapsulatedKey: Data(encapsulatedKey))
    }
}
