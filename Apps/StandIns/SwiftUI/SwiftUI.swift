// Stand-in for Apple's SwiftUI: only the views, scenes and builders Apps/ uses, each citing
// its page under https://developer.apple.com/documentation/swiftui/. Never shipped. The
// builders take the same source as Apple's; what they build is a placeholder.
import Foundation

/// …/view
@MainActor
public protocol View {
    associatedtype Body: View
    /// …/view/body-8kl5o
    @ViewBuilder var body: Body { get }
}

/// …/view: `Never` is the body of primitive views (SwiftUI declares `extension Never: View`).
extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError() }
}

/// …/emptyview
public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { fatalError() }
}

/// …/tupleview
public struct TupleView<T>: View {
    /// …/tupleview/init(_:)
    nonisolated public init(_ value: T) {}
    public var body: Never { fatalError() }
}

/// …/_conditionalcontent
public struct _ConditionalContent<TrueContent: View, FalseContent: View>: View {
    nonisolated init() {}
    public var body: Never { fatalError() }
}

/// …/viewbuilder
@resultBuilder
public struct ViewBuilder {
    /// …/viewbuilder/buildexpression(_:)
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    /// …/viewbuilder/buildblock()
    public static func buildBlock() -> EmptyView { EmptyView() }
    /// …/viewbuilder/buildblock(_:)
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// …/viewbuilder/buildblock(_:)-… (parameter packs)
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> { TupleView((repeat each content)) }
    /// …/viewbuilder/buildif(_:)
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    /// …/viewbuilder/buildeither(first:)
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent) -> _ConditionalContent<TrueContent, FalseContent> { _ConditionalContent() }
    /// …/viewbuilder/buildeither(second:)
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent) -> _ConditionalContent<TrueContent, FalseContent> { _ConditionalContent() }
}

/// https://developer.apple.com/documentation/swift/optional (SwiftUI: conforms to View when Wrapped conforms)
extension Optional: View where Wrapped: View {
    public var body: Never { fatalError() }
}

/// …/localizedstringkey
public struct LocalizedStringKey: ExpressibleByStringInterpolation, Sendable {
    public init(stringLiteral value: String) {}
}

/// …/text
public struct Text: View {
    /// …/text/init(_:tablename:bundle:comment:)
    public init(_ key: LocalizedStringKey) {}
    /// …/text/init(_:)-9d1g4
    @_disfavoredOverload
    public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { fatalError() }
}

/// …/image
public struct Image: View {
    /// …/image/init(systemname:)
    public init(systemName: String) {}
    public var body: Never { fatalError() }
}

/// …/label
public struct Label<Title: View, Icon: View>: View {
    public var body: Never { fatalError() }
}

/// …/button
public struct Button<Label: View>: View {
    public var body: Never { fatalError() }
}

extension Button where Label == Text {
    /// …/button/init(_:action:)-1asy
    public init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void) {}
}

/// …/vstack
public struct VStack<Content: View>: View {
    /// …/vstack/init(alignment:spacing:content:)
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError() }
}

/// …/divider
public struct Divider: View {
    public init() {}
    public var body: Never { fatalError() }
}

/// …/foreach
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: View {
    public var body: Never { fatalError() }
}

extension ForEach where ID == Data.Element.ID, Data.Element: Identifiable {
    /// …/foreach/init(_:content:)
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
}

/// …/state
@propertyWrapper
public struct State<Value> {
    private var value: Value
    /// …/state/init(wrappedvalue:)
    public init(wrappedValue value: Value) { self.value = value }
    /// …/state/wrappedvalue
    public var wrappedValue: Value {
        get { value }
        nonmutating set {}
    }
}

/// …/scene
@MainActor
public protocol Scene {
    associatedtype Body: Scene
    /// …/scene/body-swift.property
    @SceneBuilder var body: Body { get }
}

/// …/scenebuilder
@resultBuilder
public struct SceneBuilder {
    /// …/scenebuilder/buildexpression(_:)
    public static func buildExpression<Content: Scene>(_ content: Content) -> Content { content }
    /// …/scenebuilder/buildblock(_:)
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// …/windowgroup
public struct WindowGroup<Content: View>: Scene {
    /// …/windowgroup/init(content:)
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError() }
}

/// …/menubarextra
public struct MenuBarExtra<Label: View, Content: View>: Scene {
    public var body: Never { fatalError() }
}

extension MenuBarExtra where Label == SwiftUI.Label<Text, Image> {
    /// …/menubarextra/init(_:systemimage:content:)-…
    public init(_ titleKey: LocalizedStringKey, systemImage image: String, @ViewBuilder content: () -> Content) {}
}

/// …/scene: `Never` is the body of primitive scenes.
extension Never: Scene {}

/// …/app
@MainActor
public protocol App {
    associatedtype Body: Scene
    /// …/app/body-swift.property
    @SceneBuilder var body: Body { get }
    /// …/app/init()
    init()
}

extension App {
    /// …/app/main()
    public static func main() {}
}
