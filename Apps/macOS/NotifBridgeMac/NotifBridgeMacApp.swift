import Foundation
import SwiftUI

/// The Mac accessory: a menu-bar extra (no Dock icon: `LSUIElement`) over the same daemon as
/// `notifbridge accessory` on Linux, reached by the iPhone over Bluetooth LE.
@main
struct NotifBridgeMacApp: App {
    @State private var accessory = MacAccessory()

    var body: some Scene {
        MenuBarExtra("NotifBridge", systemImage: "bell.badge") {
            RecentView(accessory: accessory)
        }
    }
}

/// The menu: the accessory's state, then the most recent notifications, newest first.
struct RecentView: View {
    let accessory: MacAccessory

    var body: some View {
        VStack {
            Text(accessory.status)
            Divider()
            if accessory.recent.isEmpty {
                Text("No notifications yet.")
            }
            ForEach(accessory.recent) { item in
                Text(item.line)
            }
            Divider()
            Button("Quit NotifBridge") { exit(0) }
        }
    }
}
