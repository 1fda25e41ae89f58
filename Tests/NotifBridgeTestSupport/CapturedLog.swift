import Logging
import Synchronization

/// Log lines kept for assertions.
public final class CapturedLog: LogHandler, Sendable {
    private let lines = Mutex<[(Logger.Level, String)]>([])

    public init() {}

    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    public var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    public func log(event: LogEvent) {
        lines.withLock { $0.append((event.level, "\(event.message)")) }
    }

    public func messages(at level: Logger.Level) -> [String] {
        lines.withLock { $0.filter { $0.0 == level }.map(\.1) }
    }
}
