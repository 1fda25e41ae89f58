// Stand-in for Apple's UniformTypeIdentifiers: only what Apps/ uses. Never shipped.

/// https://developer.apple.com/documentation/uniformtypeidentifiers/uttype-swift.struct
public struct UTType: Hashable, Sendable {
    /// https://developer.apple.com/documentation/uniformtypeidentifiers/uttype-swift.struct/identifier
    public var identifier: String

    /// https://developer.apple.com/documentation/uniformtypeidentifiers/uttype-swift.struct/init(_:)
    public init?(_ identifier: String) { self.identifier = identifier }
}
