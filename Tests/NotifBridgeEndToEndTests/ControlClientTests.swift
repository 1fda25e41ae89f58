import Foundation
import NIOCore
import NIOPosix
@testable import NotifBridgeAccessory
import NotifBridgeControl
import NotifBridgeTestSupport
import Testing

/// `notifbridge respond` when the control socket is not what it expects: someone else's, or a
/// peer that takes the request and never answers.
@Suite("Control socket client", .timeLimit(.minutes(1)))
struct ControlClientTests {
    /// It waited until the peer closed, however long that was. A timeout shorter than the time
    /// it takes to send the request ends the send too, and is reported the same way.
    @Test("a peer that never answers is reported after the reply timeout", arguments: [1, 300])
    func silentPeer(milliseconds: Int) async throws {
        let directory = try TemporaryDirectory("control-silent")
        defer { directory.remove() }
        let path = directory.path + "/control.sock"
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(unixDomainSocketPath: path)
            .get()
        defer { server.close(promise: nil) }
        let started = ContinuousClock.now
        await #expect {
            _ = try await ControlClient.send(ControlRequest(op: .list), socketPath: path, replyTimeout: .milliseconds(milliseconds))
        } throws: { error in
            "\(error)" == "the accessory on \(path) did not answer within \(Duration.milliseconds(milliseconds))"
        }
        #expect(ContinuousClock.now - started < .seconds(20), "reported, not waited out")
    }

    /// NIO named only its error type, `unixDomainSocketPathTooLong`.
    @Test("a socket path one byte past the limit is refused by its length", arguments: [0, 1])
    func socketPathLength(pastLimit: Int) async throws {
        let length = AccessoryConfiguration.maxSocketPathLength + pastLimit
        let path = "/nonexistent-" + String(repeating: "s", count: length - 13)
        await #expect {
            _ = try await ControlClient.send(ControlRequest(op: .list), socketPath: path)
        } throws: { error in
            let text = "\(error)"
            return length > AccessoryConfiguration.maxSocketPathLength
                ? text.contains("(the path is 104 bytes, and a Unix socket path is at most 103)")
                : text.contains("(No such file or directory (errno 2))")
        }
    }

    @Test("a refused permission is not a missing accessory", arguments: [
        (EACCES, "not allowed to use the control socket /s (Permission denied): only the user the accessory runs as may; run this as that user"),
        (ENOENT, "no accessory is listening on /s (No such file or directory (errno 2)); is `notifbridge accessory` running with this --state?"),
        (ECONNREFUSED, "no accessory is listening on /s (Connection refused (errno 111)); is `notifbridge accessory` running with this --state?"),
    ])
    func connectFailures(code: Int32, message: String) {
        #expect("\(ControlClient.connectFailure(IOError(errnoCode: code, reason: "connect"), path: "/s"))" == message)
    }
}
