// Stand-in for Apple's ExtensionFoundation: only the declarations Apps/ uses, each citing where
// its shape comes from. Compiled by Apps/typecheck.sh on Linux to type-check the adapters;
// never shipped. Where a source shows only a call site, the declaration is shaped to accept
// exactly that call, and says so.

/// https://developer.apple.com/documentation/extensionfoundation/appextension
public protocol AppExtension {
    /// https://developer.apple.com/documentation/extensionfoundation/appextension/init()
    init()
}

extension AppExtension {
    /// https://developer.apple.com/documentation/extensionfoundation/appextension/main()
    /// (what `@main` runs).
    public static func main() {}

    /// Call-site shape: Apple's article "Receiving iOS notifications on an accessory"
    /// (…/accessorytransportextension/receiving-ios-notifications-on-an-accessory) and
    /// zunda-pixel/pebble-app NotificationProvider write `Identifier("…")` unqualified inside
    /// the extension type; shinvou/NotifBridge writes `AppExtensionPoint.Identifier("…")`.
    public typealias Identifier = AppExtensionPoint.Identifier
    /// Call-site shape: same article and pebble-app file, `Implementing { NotificationsForwarding { … } }`.
    public typealias Implementing = AppExtensionPoint.Implementing
}

/// https://developer.apple.com/documentation/extensionfoundation/appextensionpoint
public struct AppExtensionPoint: Sendable {
    let parts: [String]

    /// https://developer.apple.com/documentation/extensionfoundation/appextensionpoint/identifier
    /// (`Identifier("com.apple.accessory-data-provider")`, Apple's article above).
    public struct Identifier: Sendable {
        let name: String
        /// …/appextensionpoint/identifier/init(_:) (call site in the article above)
        public init(_ name: String) { self.name = name }
    }

    /// Call-site shape: `Implementing { NotificationsForwarding { Handler() } }` (Apple's article
    /// above; pebble-app NotificationProvider).
    public struct Implementing {
        let capabilities: [any Capability]
        /// Call-site shape: a trailing closure listing capabilities.
        public init(@CapabilityBuilder _ capabilities: () -> [any Capability]) { self.capabilities = capabilities() }
    }

    /// reference/apple-api.md §2.1: `NotificationsForwarding` conforms to `AppExtensionPoint.Capability`.
    public protocol Capability {}

    /// Collects the capabilities listed in `Implementing { … }` (call-site shape).
    @resultBuilder
    public struct CapabilityBuilder {
        public static func buildExpression(_ capability: any Capability) -> [any Capability] { [capability] }
        public static func buildBlock(_ parts: [any Capability]...) -> [any Capability] { parts.flatMap { $0 } }
    }

    /// `@AppExtensionPoint.Bind static var boundExtensionPoint: AppExtensionPoint { Identifier("…") }`:
    /// Apple's article "Receiving iOS notifications on an accessory" (security extension sample)
    /// and pebble-app/shinvou's security and transport extensions. On Apple's side it may be a
    /// macro; here it is a result builder, which accepts the same source. The data provider's
    /// `extensionPoint` body (no attribute) gets it from the protocol requirement.
    @resultBuilder
    public struct Bind {
        public static func buildExpression(_ identifier: Identifier) -> [String] { [identifier.name] }
        public static func buildExpression(_ implementing: Implementing) -> [String] { implementing.capabilities.map { "\(type(of: $0))" } }
        public static func buildBlock(_ parts: [String]...) -> [String] { parts.flatMap { $0 } }
        public static func buildFinalResult(_ parts: [String]) -> AppExtensionPoint { AppExtensionPoint(parts: parts) }
    }
}
