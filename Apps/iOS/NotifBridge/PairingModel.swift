import AccessoryNotifications
import AccessorySetupKit
import CoreBluetooth
import Foundation
import NotifBridgeWire
import Observation
import UIKit

/// The pairing and the forwarding decision, as the app shows them. AccessorySetupKit finds the
/// accessory by the GATT profile's service UUID and name (PROTOCOL.md §2.1), the same values
/// the Info.plists declare; AccessoryNotifications asks the person which apps may forward.
@MainActor
@Observable
final class PairingModel {
    private(set) var accessory: ASAccessory?
    private(set) var decision: ForwardingDecision?
    private(set) var message: String?

    @ObservationIgnored private let session = ASAccessorySession()
    @ObservationIgnored private let center = AccessoryNotificationCenter()

    init() {
        session.activate(on: DispatchQueue.main) { [weak self] event in
            MainActor.assumeIsolated { self?.handle(event) }
        }
    }

    var accessoryLine: String {
        guard let accessory else { return "No accessory paired." }
        switch accessory.state {
        case .authorized: return "Paired with \(accessory.displayName)."
        case .awaitingAuthorization: return "\(accessory.displayName) is waiting for you to finish pairing."
        case .unauthorized: return "\(accessory.displayName) is no longer paired; pair it again."
        @unknown default: return "\(accessory.displayName): pairing state unknown."
        }
    }

    var forwardingLine: String {
        guard let decision else { return "Forwarding: not asked yet." }
        switch decision {
        case .allow: return "Forwarding notifications of all apps."
        case .limited: return "Forwarding notifications of the apps you chose."
        case .deny: return "Forwarding is off."
        case .undetermined: return "Forwarding: you have not decided yet."
        @unknown default: return "Forwarding: \(decision)"
        }
    }

    private func handle(_ event: ASAccessoryEvent) {
        switch event.eventType {
        case .activated:
            accessory = session.accessories.first
            Task { await refresh() }
        case .accessoryAdded, .accessoryChanged:
            accessory = event.accessory ?? session.accessories.first
            message = nil
            Task { await refresh() }
        case .accessoryRemoved:
            accessory = nil
            decision = nil
        default:
            break
        }
    }

    /// Shows the system's accessory picker for NotifBridge accessories nearby.
    func pair() {
        let descriptor = ASDiscoveryDescriptor()
        descriptor.bluetoothServiceUUID = CBUUID(string: GATTProfile.serviceUUID)
        descriptor.bluetoothNameSubstring = GATTProfile.advertisedName
        let item = ASPickerDisplayItem(
            name: "NotifBridge accessory",
            productImage: UIImage(systemName: "bell.badge") ?? UIImage(),
            descriptor: descriptor
        )
        session.showPicker(for: [item]) { [weak self] error in
            guard let error else { return }
            MainActor.assumeIsolated { self?.message = "Pairing did not finish: \(error.localizedDescription)" }
        }
    }

    func requestForwarding() async {
        guard let accessory else { return }
        await run { try await self.center.requestForwarding(for: accessory) }
    }

    func presentSettings() async {
        guard let accessory else { return }
        await run { try await self.center.presentSettings(for: accessory) }
    }

    func refresh() async {
        guard let accessory else { return }
        await run { try await self.center.forwardingStatus(for: accessory) }
    }

    private func run(_ call: () async throws -> ForwardingDecision) async {
        do {
            decision = try await call()
            message = nil
        } catch {
            message = ForwardingMessages.explain(error)
        }
    }
}
