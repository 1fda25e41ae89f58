import AccessoryTransportExtension
import ExtensionFoundation

/// The transport-security extension: relays the key exchange between the accessory and the
/// system. Its logic is the package's `SecurityRelay`.
@main
struct TransportSecurityExtension: AccessoryTransportSecurity {
    @AppExtensionPoint.Bind
    static var boundExtensionPoint: AppExtensionPoint {
        Identifier("com.apple.accessory-transport-security")
    }

    func accept(sessionRequest: AccessorySecuritySession.Request) -> AccessorySecuritySession.Request.Decision {
        sessionRequest.accept { SecurityHandler(session: sessionRequest.session) }
    }
}
