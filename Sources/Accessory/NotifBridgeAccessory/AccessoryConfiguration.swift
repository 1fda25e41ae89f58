import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeLogGate
import NotifBridgeTCP
import NotifBridgeWire

/// How the accessory daemon runs. Validated before anything is opened or bound.
public struct AccessoryConfiguration: Sendable {
    /// Directory for the key files and the SQLite store (created 0700).
    public var stateDirectory: String
    public var host: String
    public var port: Int
    public var suite: CipherSuite
    public var limits: WireLimits
    public var resources: ResourceLimits
    /// How long a commit waits for more events after the first of a batch (group commit): one
    /// transaction and one fsync for everything that arrives meanwhile. Receipts wait that much
    /// longer. Only batches that hold several events, or come within a window of the
    /// connection's last commit, wait (``CommitPacing``); zero commits each batch at once.
    public var commitWindow: Duration

    /// The most a commit may wait for more events.
    public static let maxCommitWindow = Duration.milliseconds(100)
    /// NIO takes Unix socket paths of at most 103 bytes on every platform (Darwin's `sun_path`
    /// holds 104 with the NUL; Linux's holds 108).
    public static let maxSocketPathLength = 103

    public init(
        stateDirectory: String,
        host: String = "127.0.0.1",
        port: Int = TCPLink.defaultPort,
        suite: CipherSuite = .xWing,
        limits: WireLimits = .default,
        resources: ResourceLimits = .init(),
        commitWindow: Duration = .milliseconds(3)
    ) {
        self.stateDirectory = stateDirectory
        self.host = host
        self.port = port
        self.suite = suite
        self.limits = limits
        self.resources = resources
        self.commitWindow = commitWindow
    }

    /// What the accessory spends on all its links together, whatever peers send. Each link
    /// also has its own `WireLimits`.
    public struct ResourceLimits: Sendable {
        /// Connections open at once; a further one is closed as soon as it is accepted.
        public var maxConnections: Int
        /// Partial-message bytes all links may reserve together (`ReassemblyBudget`).
        public var reassemblyBudget: Int
        /// Inputs a link may have waiting; while they do, the daemon stops reading that link.
        public var maxQueuedInputs: Int
        /// Refusal lines per origin per window; the rest are summarised (`LogThrottle` in NotifBridgeLogGate).
        public var logBurst: Int
        public var logInterval: Duration

        public init(
            maxConnections: Int = 32,
            reassemblyBudget: Int = ReassemblyBudget.defaultCapacity,
            maxQueuedInputs: Int = 256,
            logBurst: Int = 5,
            logInterval: Duration = .seconds(10)
        ) {
            self.maxConnections = maxConnections
            self.reassemblyBudget = reassemblyBudget
            self.maxQueuedInputs = maxQueuedInputs
            self.logBurst = logBurst
            self.logInterval = logInterval
        }

        /// The one gate for the daemon's rationed lines, its alert sinks' included.
        public func makeLogGate() -> LogGate {
            LogGate(LogThrottle(burst: logBurst, interval: logInterval))
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// A loopback listener stands in for Bluetooth during development; anything else is a
    /// local-network link, where Apple requires X-Wing.
    public var isLocalNetwork: Bool { !TCPLink.isLoopback(host) }

    /// Whole milliseconds when they fit an Int (the option's unit), else the Duration as Swift
    /// prints it: converting Int.max milliseconds back to an Int traps.
    private static func milliseconds(_ duration: Duration) -> String {
        Int(exactly: (duration / .milliseconds(1)).rounded(.towardZero)).map(String.init) ?? "\(duration)"
    }

    public func validate() throws(Invalid) {
        if isLocalNetwork && suite == .p256 {
            throw Invalid(description: "--suite p256 cannot be used with --host \(host): local-network transports require X-Wing (P-256 is Bluetooth-only)")
        }
        guard commitWindow >= .zero, commitWindow <= Self.maxCommitWindow else {
            throw Invalid(description: "--commit-window must be 0...\(Self.milliseconds(Self.maxCommitWindow)) milliseconds, not \(Self.milliseconds(commitWindow))")
        }
        // The control socket's path must fit a Unix socket address; checked before the key and
        // the store are made, so that a refused start leaves nothing behind.
        guard controlSocketPath.utf8.count <= Self.maxSocketPathLength else {
            throw Invalid(description: "--state \(stateDirectory) is too long for the control socket inside it: \(controlSocketPath) is \(controlSocketPath.utf8.count) bytes, and a Unix socket path is at most \(Self.maxSocketPathLength); use a shorter state directory")
        }
        guard (0...65535).contains(port) else {
            throw Invalid(description: "--port \(port) is not a TCP port (0...65535)")
        }
        guard resources.maxConnections >= 1, resources.maxQueuedInputs >= 1, resources.logBurst >= 1,
              resources.reassemblyBudget >= limits.maxMessageLength else {
            throw Invalid(description: "resource limits must allow one connection, one queued input, one log line and one largest message (\(limits.maxMessageLength) bytes)")
        }
    }

    /// The session's rules for one link: P-256 is refused on the local network (Apple's rule),
    /// whatever address the accessory listens on.
    func sessionConfiguration(for kind: LinkKind) -> AccessorySession.Configuration {
        AccessorySession.Configuration(
            allowsP256: kind != .localNetwork,
            transports: kind == .localNetwork ? [.localNetwork] : [.bluetooth],
            limits: limits
        )
    }

    /// The SQLite store (with its -wal and -shm files beside it).
    public var storePath: String { Self.storePath(stateDirectory: stateDirectory) }

    public static func storePath(stateDirectory: String) -> String {
        (stateDirectory as NSString).appendingPathComponent("accessory.sqlite")
    }

    /// Where `notifbridge respond` reaches the running daemon (mode 0600 through the umask).
    public var controlSocketPath: String { Self.controlSocketPath(stateDirectory: stateDirectory) }

    public static func controlSocketPath(stateDirectory: String) -> String {
        (stateDirectory as NSString).appendingPathComponent("control.sock")
    }
}
