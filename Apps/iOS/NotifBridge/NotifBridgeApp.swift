import SwiftUI

/// The companion app: pairs the accessory through AccessorySetupKit and asks for notification
/// forwarding. It never sees a notification; only the extensions do (reference/apple-api.md §1).
@main
struct NotifBridgeApp: App {
    @State private var model = PairingModel()

    var body: some Scene {
        WindowGroup {
            PairingView(model: model)
        }
    }
}

/// One screen: the accessory, the forwarding decision, and what can be done next.
struct PairingView: View {
    let model: PairingModel

    var body: some View {
        VStack {
            Text("NotifBridge")
            Text(model.accessoryLine)
            Text(model.forwardingLine)
            if let message = model.message {
                Text(message)
            }
            if model.accessory == nil {
                Button("Pair an accessory") { model.pair() }
            } else {
                Button("Allow forwarding") { Task { await model.requestForwarding() } }
                Button("Forwarding settings") { Task { await model.presentSettings() } }
                Button("Check again") { Task { await model.refresh() } }
            }
        }
    }
}
