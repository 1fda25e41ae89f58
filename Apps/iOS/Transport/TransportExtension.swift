import AccessoryTransportExtension
import ExtensionFoundation

/// The transport extension: carries the system's ciphertext to the accessory over Bluetooth LE
/// and the accessory's replies back. Its logic is the package's `TransportLink`.
@main
struct TransportExtension: AccessoryTransportAppExtension {
    @AppExtensionPoint.Bind
    static var boundExtensionPoint: AppExtensionPoint {
        Identifier("com.apple.accessory-transport-extension")
    }

    func accept(sessionRequest: AccessoryTransportSession.Request) -> AccessoryTransportSession.Request.Decision {
        sessionRequest.accept { TransportHandler(session: sessionRequest.session) }
    }
}
