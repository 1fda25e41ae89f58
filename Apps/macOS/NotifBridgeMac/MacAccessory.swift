import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire
import Observation

/// The accessory on a Mac: `AccessoryDaemon` (the Linux daemon's store, policy and sessions)
/// with links from the CoreBluetooth peripheral, its X-Wing key generated here and kept in the
/// Keychain (CryptoKit underneath swift-crypto on Apple platforms), banners, and a list of
/// recent notifications for the menu.
@MainActor
@Observable
final class MacAccessory {
    struct Recent: Identifiable, Sendable {
        var id: String
        var line: String
    }

    /// Entries the menu lists; older ones stay in the store.
    static let recentLimit = 12
    static let service = "org.notifbridge.NotifBridgeMac"

    private(set) var status = "Starting…"
    private(set) var recent: [Recent] = []

    @ObservationIgnored private var task: Task<Void, Never>?

    init() {
        task = Task { await run() }
    }

    private func run() async {
        let logger = Logger(label: Self.service)
        do {
            let directory = try Self.stateDirectory()
            let keys = SecretItemKeyStore(items: KeychainItems(service: Self.service), service: Self.service)
            let banners = Banners()
            let presenter = MenuPresenter(banners: banners) { [weak self] event in
                Task { @MainActor in self?.show(event) }
            }
            let daemon = try AccessoryDaemon(
                configuration: AccessoryConfiguration(stateDirectory: directory, suite: .xWing),
                presenter: presenter,
                sinks: [banners],
                keyStore: keys,
                logger: logger
            )
            banners.respond = { request in _ = await daemon.control.respond(request) }
            let peripheral = PeripheralLink(name: GATTProfile.advertisedName)
            try await daemon.run(
                links: peripheral.links,
                announce: .advertising(adapter: "CoreBluetooth", name: GATTProfile.advertisedName, suite: CipherSuite.xWing.rawValue, keyID: hexString(daemon.keyID))
            )
        } catch {
            status = "Stopped: \(error)"
            logger.error("the accessory stopped: \(error)")
        }
    }

    private func show(_ event: PresenterEvent) {
        switch event {
        case .advertising(_, let name, _, let keyID):
            status = "Advertising as \(name) (key \(keyID))"
        case .connected:
            status = "iPhone connected"
        case .disconnected:
            status = "Waiting for the iPhone"
        case .notification(let record, let change):
            let id = Banner.identifier(source: record.sourceIdentifier, id: record.notificationIdentifier)
            recent.removeAll { $0.id == id }
            if change != .removed {
                let banner = Banner(record)
                recent.insert(Recent(id: id, line: "\(record.notification.sourceName): \(banner.title) — \(banner.body)"), at: 0)
                recent = Array(recent.prefix(Self.recentLimit))
            }
        case .removedAll:
            recent.removeAll()
        default:
            break
        }
    }

    /// Application Support/NotifBridge inside the sandbox container: the store and the
    /// control socket (the key is in the Keychain, not here).
    private static func stateDirectory() throws -> String {
        let base = try FileManager.default.url(for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
        return base.appendingPathComponent("NotifBridge", isDirectory: true).path
    }
}

/// Hands the daemon's events to the menu, and withdraws the banner of a removed notification.
final class MenuPresenter: Presenter, @unchecked Sendable {
    private let banners: Banners
    private let forward: @Sendable (PresenterEvent) -> Void

    init(banners: Banners, _ forward: @escaping @Sendable (PresenterEvent) -> Void) {
        self.banners = banners
        self.forward = forward
    }

    func present(_ event: PresenterEvent) {
        if case .notification(let record, .removed) = event {
            banners.withdraw(source: record.sourceIdentifier, id: record.notificationIdentifier)
        }
        forward(event)
    }
}
