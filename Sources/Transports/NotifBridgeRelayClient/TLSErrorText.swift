import Foundation
import NIOSSL

/// A failed TLS handshake with the relay in BoringSSL's reason words ("CERTIFICATE_VERIFY_FAILED"),
/// without its error numbers and the build machine's file paths; nil for other errors.
func tlsErrorText(_ error: any Error) -> String? {
    let reason: String
    switch error {
    case NIOSSLError.handshakeFailed(.sslError(let errors)), NIOSSLError.handshakeFailed(.unknownError(let errors)):
        reason = errors.map { reasonWords($0.description) }.joined(separator: "; ")
    case NIOSSLError.handshakeFailed(let failure):
        reason = "\(failure)"
    case let error as NIOSSLExtraError:
        // "NIOSSLExtraError.failedToValidateHostname: Couldn't find x in certificate from peer"
        let text = "\(error)"
        reason = text.split(separator: ": ", maxSplits: 1).last.map(String.init) ?? text
    case let error as NIOSSLError:
        reason = "\(error)"
    default:
        return nil
    }
    return "the TLS handshake with the relay failed: \(reason)"
}

/// "Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at
/// /path/handshake.cc:320" → "CERTIFICATE_VERIFY_FAILED".
private func reasonWords(_ description: String) -> String {
    var text = Substring(description)
    if let at = text.range(of: " at /") { text = text[..<at.lowerBound] }
    return text.split(separator: ":").last.map(String.init) ?? description
}
