import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// The test-only keys and certificates of Tests/Fixtures/apns-standin.
public enum StandInFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/apns-standin").standardizedFileURL

    public static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    public static func caCertificates() throws -> [NIOSSLCertificate] {
        try NIOSSLCertificate.fromPEMBytes(Array(text("ca.pem").utf8))
    }
}

/// A local APNs: HTTP/2 over TLS (ALPN) with the test CA's certificate. It checks what APNs
/// checks of a push of type `accessory` (the provider token's ES256 signature, key ID and team,
/// the push type, the topic, the device token, the size), answers as APNs does, and hands each
/// push it accepts to `deliver`: the simulated iPhone's system.
public final class APNsStandIn: Sendable {
    let teamID: String
    let keyID: String
    let publicKey: P256.Signing.PublicKey
    /// Device token (hex) → the bundle ID of the app it belongs to.
    let devices: [String: String]
    let deliver: @Sendable (Data) -> Void

    /// Every request's outcome, as `status reason`.
    public let answers = Mutex<[String]>([])

    public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, devices: [String: String], deliver: @escaping @Sendable (Data) -> Void) {
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.devices = devices
        self.deliver = deliver
    }

    public func application(onListening: @escaping @Sendable (Int) async -> Void) throws -> some ApplicationProtocol {
        let router = Router()
        router.post("/3/device/{token}") { request, context -> Response in
            let answer = try await self.answer(request, context)
            self.answers.withLock { $0.append("\(answer.status.code) \(answer.reason)") }
            guard answer.status == .ok else {
                return Response(status: answer.status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"reason":"\#(answer.reason)"}"#)))
            }
            return Response(status: .ok, headers: [HTTPField.Name("apns-id")!: UUID().uuidString])
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(StandInFixtures.text("server.pem").utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(StandInFixtures.text("server-key.pem").utf8), format: .pem))
        )
        tls.applicationProtocols = ["h2", "http/1.1"]
        return Application(
            router: router,
            server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { await onListening($0.localAddress?.port ?? 0) },
            logger: Logger(label: "apns-standin", factory: { _ in SwiftLogNoOpLogHandler() })
        )
    }

    private func answer(_ request: Request, _ context: some RequestContext) async throws -> (status: HTTPResponse.Status, reason: String) {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("bearer "),
              verify(token: String(authorization.dropFirst("bearer ".count))) else { return (.forbidden, "InvalidProviderToken") }
        guard request.headers[HTTPField.Name("apns-push-type")!] == "accessory" else { return (.badRequest, "InvalidPushType") }
        guard let token = context.parameters.get("token"), let bundle = devices[token] else { return (.badRequest, "BadDeviceToken") }
        guard request.headers[HTTPField.Name("apns-topic")!] == "\(bundle).push-type.accessory" else { return (.badRequest, "DeviceTokenNotForTopic") }
        var body = try await request.body.collect(upTo: 8192)
        guard body.readableBytes <= 4096 else { return (.contentTooLarge, "PayloadTooLarge") }
        deliver(Data(body.readBytes(length: body.readableBytes) ?? []))
        return (.ok, "")
    }

    /// An ES256 JWT of this team and key, signed by the key's private half.
    private func verify(token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Self.base64URL(parts[0]), let claims = Self.base64URL(parts[1]), let signature = Self.base64URL(parts[2]),
              let headerJSON = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
              let claimsJSON = try? JSONSerialization.jsonObject(with: claims) as? [String: Any],
              headerJSON["alg"] as? String == "ES256", headerJSON["kid"] as? String == keyID,
              claimsJSON["iss"] as? String == teamID, claimsJSON["iat"] is Int,
              let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
    }

    private static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while !base64.count.isMultiple(of: 4) { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
