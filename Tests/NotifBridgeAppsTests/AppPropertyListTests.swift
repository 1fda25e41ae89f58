import Foundation
import NotifBridgeWire
import Testing

/// The Apple apps' Info.plists and entitlements (Apps/), parsed as the system would read them.
/// Nothing here can be run on Linux but these files: a wrong key in them fails only on a device,
/// late and silently (an extension the system never loads), so each key the platform needs is
/// checked here against what the package and docs/APPLE.md say.
@Suite("Apple apps: Info.plists and entitlements")
struct AppPropertyListTests {
    static let apps = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Apps").standardizedFileURL

    static func plist(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: apps.appendingPathComponent(path))
        let value = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try #require(value as? [String: Any], "\(path) is not a dictionary")
    }

    /// The iOS targets: folder, extension point (nil for the app) and the entitlement it needs.
    static let iOSTargets: [(folder: String, point: String?, entitlement: String?)] = [
        ("NotifBridge", nil, nil),
        ("DataProvider", "com.apple.accessory-data-provider", "com.apple.developer.accessory-data-provider"),
        ("TransportSecurity", "com.apple.accessory-transport-security", "com.apple.developer.accessory-transport-security"),
        ("Transport", "com.apple.accessory-transport-extension", "com.apple.developer.accessory-transport-extension"),
    ]

    @Test("Every .plist and .entitlements file under Apps/ parses as a dictionary")
    func everyFileParses() throws {
        let files = try #require(FileManager.default.enumerator(atPath: Self.apps.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".plist") || $0.hasSuffix(".entitlements") }
        #expect(files.count == 10, "4 iOS targets and the Mac app, each an Info.plist and entitlements: \(files.sorted())")
        for file in files { _ = try Self.plist(file) }
    }

    @Test("The app and all three extensions find the accessory through AccessorySetupKit", arguments: iOSTargets.map(\.folder))
    func accessorySetupKit(folder: String) throws {
        let info = try Self.plist("iOS/\(folder)/Info.plist")
        #expect(info["NSAccessorySetupKitSupports"] as? [String] == ["Bluetooth"])
        #expect(info["NSAccessorySetupBluetoothServices"] as? [String] == [GATTProfile.serviceUUID])
        #expect(info["NSAccessorySetupBluetoothNames"] as? [String] == [GATTProfile.advertisedName])
    }

    @Test("Each extension declares its ExtensionKit point, and none the NSExtension of app extensions", arguments: iOSTargets.filter { $0.point != nil }.map { ($0.folder, $0.point!) })
    func extensionPoints(folder: String, point: String) throws {
        let info = try Self.plist("iOS/\(folder)/Info.plist")
        let attributes = try #require(info["EXAppExtensionAttributes"] as? [String: Any])
        #expect(attributes["EXExtensionPointIdentifier"] as? String == point)
        #expect(info["NSExtension"] == nil)
        let capabilities = attributes["EXCapabilities"] as? [String]
        if point == "com.apple.accessory-data-provider" {
            #expect(capabilities == ["AccessoryNotifications.NotificationsForwarding"])
        } else {
            #expect(capabilities == nil)
        }
    }

    @Test("Each extension holds exactly its own entitlement, as a boolean true; the app holds none", arguments: iOSTargets.map(\.folder))
    func entitlements(folder: String) throws {
        let entitlements = try Self.plist("iOS/\(folder)/\(folder).entitlements")
        let accessory = entitlements.filter { $0.key.hasPrefix("com.apple.developer.accessory-") }
        let expected = Self.iOSTargets.first { $0.folder == folder }?.entitlement
        #expect(accessory.keys.sorted() == (expected.map { [$0] } ?? []))
        if let expected { #expect(entitlements[expected] as? Bool == true) }
    }

    @Test("The transport extension exports a data-access-protocol type, runs as a Bluetooth central in the background, and says why")
    func transport() throws {
        let info = try Self.plist("iOS/Transport/Info.plist")
        let types = try #require(info["UTExportedTypeDeclarations"] as? [[String: Any]])
        #expect(types.contains { ($0["UTTypeConformsTo"] as? [String])?.contains("public.data-access-protocol") == true })
        #expect((info["UIBackgroundModes"] as? [String])?.contains("bluetooth-central") == true)
        #expect(((info["NSBluetoothAlwaysUsageDescription"] as? String) ?? "").count > 20)
    }

    @Test("The security and transport extensions share the agreed exchange through one app group")
    func appGroup() throws {
        let groups = try ["TransportSecurity", "Transport"].map { folder in
            try Self.plist("iOS/\(folder)/\(folder).entitlements")["com.apple.security.application-groups"] as? [String]
        }
        #expect(groups[0] != nil && groups[0] == groups[1])
    }

    @Test("The Mac accessory: a menu-bar app, sandboxed with Bluetooth, saying why it uses Bluetooth")
    func mac() throws {
        let info = try Self.plist("macOS/NotifBridgeMac/Info.plist")
        #expect(info["LSUIElement"] as? Bool == true)
        #expect(((info["NSBluetoothAlwaysUsageDescription"] as? String) ?? "").count > 20)
        let entitlements = try Self.plist("macOS/NotifBridgeMac/NotifBridgeMac.entitlements")
        #expect(entitlements["com.apple.security.app-sandbox"] as? Bool == true)
        #expect(entitlements["com.apple.security.device.bluetooth"] as? Bool == true)
    }

    @Test("Each project.yml points at these files", arguments: [
        ("iOS/project.yml", ["NotifBridge", "DataProvider", "TransportSecurity", "Transport"]),
        ("macOS/project.yml", ["NotifBridgeMac"]),
    ])
    func projects(project: String, folders: [String]) throws {
        let yaml = try String(contentsOf: Self.apps.appendingPathComponent(project), encoding: .utf8)
        for folder in folders {
            #expect(yaml.contains("INFOPLIST_FILE: \(folder)/Info.plist"))
            #expect(yaml.contains("CODE_SIGN_ENTITLEMENTS: \(folder)/\(folder).entitlements"))
        }
        #expect(!project.hasPrefix("iOS") || yaml.components(separatedBy: "type: extensionkit-extension").count == 4, "three ExtensionKit extensions")
    }
}
