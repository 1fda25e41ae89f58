import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import NotifBridgeCrypto
import NotifBridgeDisplay

@main
struct NotifBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifbridge",
        abstract: "iPhone notification forwarding to accessories: the accessory daemon and a simulated iPhone.",
        subcommands: [DemoCommand.self, AccessoryCommand.self, PhoneCommand.self, RespondCommand.self, RelayCommand.self, PolicyCommand.self, VectorsCommand.self]
    )

    /// ArgumentParser's own entry point, after making NIO's event loops the executor of every
    /// task: a chunk read on an event loop then resumes the connection's task on that same
    /// thread, not on Swift's pool, a thread switch (a futex wake and a context switch) per
    /// chunk saved. Measured with Benchmarks/load.sh: about 15% of the accessory's CPU at
    /// 3,000 notifications/s. A task that blocks (a store commit's fsync) now holds up that loop's
    /// sockets for as long, as it held up one of the pool's threads before.
    static func main() async {
        // A closed pipe is an error to handle where it happens (the reader of the accessory's
        // output exits, a hook skips its input), not a signal that ends the whole process.
        signal(SIGPIPE, SIG_IGN)
        // A parent that ignores SIGCHLD passes that on through exec, and the kernel then reaps
        // children before anyone can wait for them: every hook and service extension that ran
        // was reported as failed ("No child processes").
        signal(SIGCHLD, SIG_DFL)
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exitShowingSafely(error)
        }
        if !flushedStandardOutput() { Foundation.exit(1) }
    }

    /// Whether everything printed reached standard output. `print` drops a failed write without a
    /// word, so `respond list > file` on a full disk would end in success with the file cut
    /// short. A reader that went away (`| head`) is no news to anyone, so it is not reported.
    static func flushedStandardOutput() -> Bool {
        // Every stream: Swift 6 will not name C's `stdout`, and standard output is the only
        // buffered stream this process writes.
        guard fflush(nil) != 0 else { return true }
        let failed = errno
        if failed != EPIPE { writeToStandardError("Error: standard output could not be written: \(String(cString: strerror(failed)))\n") }
        return false
    }

    /// ArgumentParser's `exit(withError:)`, with the message made safe for a terminal first: an
    /// error can quote a peer's text or a key from a person's own file, and a control sequence
    /// in either must be shown, not acted on. Line breaks stay (usage and help are several lines).
    static func exitShowingSafely(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        let message = terminalSafe(fullMessage(for: error), lineBreak: "\n")
        if !message.isEmpty {
            if code.isSuccess {
                print(message)
                if !flushedStandardOutput() { Foundation.exit(1) }
            } else {
                writeToStandardError(message + "\n")
            }
        }
        Foundation.exit(code.rawValue)
    }
}

/// Writes to standard error, come what may: Foundation's `write(_:)` traps when the write fails
/// (standard error on a full disk, `/dev/full`, a file over its size limit), which turned a
/// clear exit into a crash.
func writeToStandardError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Option(help: "Log level on standard error: trace, debug, info, notice, warning, error, critical. Notification content, where a command sees any (the relay sees none), appears only at debug and below.")
    var logLevel: Logger.Level = .notice

    func makeLogger(_ label: String) -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A key suite as the command line spells it. (ArgumentParser shows a raw-valued enum's default
/// by its raw value, so `CipherSuite` itself would show `XWing`.)
enum SuiteOption: String, CaseIterable, ExpressibleByArgument {
    case xwing, p256

    init?(argument: String) {
        switch CipherSuite(wireName: argument) {
        case .xWing: self = .xwing
        case .p256: self = .p256
        case nil: return nil
        }
    }

    var suite: CipherSuite {
        switch self {
        case .xwing: .xWing
        case .p256: .p256
        }
    }

    /// Shown beside each value in --help.
    var defaultValueDescription: String {
        switch self {
        case .xwing: "X-Wing (ML-KEM-768 + X25519): post-quantum; required on the local network and the internet"
        case .p256: "P-256: a Bluetooth-only fallback (or loopback, for development)"
        }
    }
}

/// An empty `--state` would put the key, the store or the socket in the working directory.
/// - Parameter owned: the command makes the directory its own (0700), as the accessory and the
///   relay do; then a directory others share is refused: `--state /tmp` would lock every other
///   user out of /tmp.
func checkStateOption(_ path: String, owned: Bool = false) throws {
    guard !path.isEmpty else { throw ValidationError("--state must name a directory") }
    // FileManager's attributes, not stat(2)'s fields: in this target a clean build resolves
    // `stat` through another module's view of the C headers and refuses its fields.
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    guard owned, let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
          attributes[.type] as? FileAttributeType == .typeDirectory,
          let permissions = attributes[.posixPermissions] as? Int else { return }
    if permissions & 0o1002 != 0 {
        let mode = String(permissions & 0o7777, radix: 8)
        throw ValidationError("--state \(path) is a directory other users share (mode \(mode)), which this command would make its own (0700); give it a directory inside, e.g. \((path as NSString).appendingPathComponent("notifbridge"))")
    }
}

func defaultStateDirectory() -> String {
    let environment = ProcessInfo.processInfo.environment
    if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/notifbridge" }
    return (environment["HOME"] ?? ".") + "/.local/state/notifbridge"
}

/// A failure to report as one plain line, without the usage text ArgumentParser adds for
/// validation errors.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
