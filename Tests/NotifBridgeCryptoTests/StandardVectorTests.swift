import Crypto
import Foundation
@testable import NotifBridgeCrypto
import NotifBridgeTestSupport
import Testing

/// RFC 9180 and X-Wing vectors, run through the accessory's own key restore and recipient setup.
@Suite("Standard vectors")
struct StandardVectorTests {
    struct HPKEFile: Decodable {
        struct Vector: Decodable {
            struct Export: Decodable {
                var exporter_context: String
                var L: Int
                var exported_value: String
            }
            struct Encryption: Decodable {
                var aad: String
                var ct: String
                var pt: String
            }
            var kem_id: Int
            var aead_id: Int
            var info: String
            var skRm: String
            var pkRm: String
            var enc: String
            var exports: [Export]
            var encryptions: [Encryption]
        }
        var vectors: [Vector]
    }

    struct XWingFile: Decodable {
        struct Vector: Decodable {
            var seed: String
            var pk: String
            var ct: String
            var ss: String
        }
        var vectors: [Vector]
    }

    private static func aead(_ id: Int) -> HPKE.AEAD {
        switch id {
        case 1: .AES_GCM_128
        case 2: .AES_GCM_256
        default: .chaChaPoly
        }
    }

    private func check(_ vector: HPKEFile.Vector, suite: CipherSuite, kem: HPKE.KEM) throws {
        let key = try AccessoryPrivateKey(suite: suite, secretRepresentation: Data(hex: vector.skRm))
        var recipient = try RecipientSession.makeRecipient(
            privateKey: key,
            ciphersuite: HPKE.Ciphersuite(kem: kem, kdf: .HKDF_SHA256, aead: Self.aead(vector.aead_id)),
            info: Data(hex: vector.info),
            encapsulatedKey: Data(hex: vector.enc)
        )
        #expect(!vector.exports.isEmpty)
        for export in vector.exports {
            let secret = try recipient.exportSecret(context: Data(hex: export.exporter_context), outputByteCount: export.L)
            #expect(secret.withUnsafeBytes { Data($0) }.hex == export.exported_value)
        }
        for encryption in vector.encryptions {
            #expect(try recipient.open(Data(hex: encryption.ct), authenticating: Data(hex: encryption.aad)).hex == encryption.pt)
        }
    }

    @Test("RFC 9180 DHKEM(P-256) base-mode export and open vectors")
    func rfc9180P256() throws {
        let file = try TestVectors.load(HPKEFile.self, from: "hpke-rfc9180-p256.json")
        #expect(file.vectors.contains { $0.aead_id == 2 }, "the AES-256-GCM suite the platform uses must be covered")
        for vector in file.vectors {
            #expect(vector.kem_id == 16)
            let key = try AccessoryPrivateKey(suite: .p256, secretRepresentation: Data(hex: vector.skRm))
            // The offered form is raw X‖Y; the vector's pkRm is the uncompressed point 04‖X‖Y.
            #expect(Data([0x04]) + key.publicKeyRepresentation == Data(hex: vector.pkRm))
            try check(vector, suite: .p256, kem: .P256_HKDF_SHA256)
        }
    }

    @Test("X-Wing (draft-connolly-cfrg-xwing-kem-06) key derivation and decapsulation")
    func xWingKEM() throws {
        let file = try TestVectors.load(XWingFile.self, from: "xwing-kem.json")
        #expect(file.vectors.count >= 3)
        for vector in file.vectors {
            let key = try AccessoryPrivateKey(suite: .xWing, secretRepresentation: Data(hex: vector.seed))
            #expect(key.publicKeyRepresentation.hex == vector.pk)
            #expect(key.secretRepresentation.hex == vector.seed)
            guard case .xWing(let xWing) = key else {
                Issue.record("restored key is not X-Wing")
                continue
            }
            #expect(try xWing.decapsulate(Data(hex: vector.ct)).withUnsafeBytes { Data($0) }.hex == vector.ss)
        }
    }

    @Test("HPKE with the X-Wing KEM (draft-ietf-hpke-pq-04) through the recipient")
    func hpkeXWing() throws {
        let file = try TestVectors.load(HPKEFile.self, from: "hpke-xwing.json")
        #expect(!file.vectors.isEmpty)
        for vector in file.vectors {
            #expect(vector.kem_id == 0x647a)
            try check(vector, suite: .xWing, kem: .XWingMLKEM768X25519)
        }
    }
}
