// Stand-in for Apple's UIKit: only what Apps/ uses. Never shipped.
import Foundation

/// https://developer.apple.com/documentation/uikit/uiimage
open class UIImage: NSObject {
    /// https://developer.apple.com/documentation/uikit/uiimage/init(systemname:)
    public init?(systemName name: String) { super.init() }

    /// https://developer.apple.com/documentation/objectivec/nsobject-swift.class/init() (an empty image)
    public override init() { super.init() }
}
