import Foundation
import NIOCore
import NIOEmbedded
import NotifBridgeControl

/// Control-socket lines from local programs: the line decoder, then each request's parsing.
enum ControlTarget {
    /// A small line limit, so short inputs reach the too-long path.
    static let controlLineLimit = 512

    /// The input reaches the control socket's line decoder in pieces (a size byte, then up to
    /// 256 bytes); each line it hands up is parsed as a request, and a request must survive
    /// being encoded and parsed again unchanged.
    static func run(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        do {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ControlLineDecoder(maxLength: controlLineLimit)))
        } catch {
            preconditionFailure("line decoder: \(error)")
        }
        var input = FuzzInput(bytes)
        while let size = input.byte() {
            do {
                try channel.writeInbound(channel.allocator.buffer(bytes: input.take(Int(size) + 1)))
            } catch {
                preconditionFailure("the line decoder threw instead of reporting: \(error)")
            }
            while let line = try? channel.readInbound(as: Result<String, ControlLineTooLong>.self) {
                if case .success(let text) = line { request(text) }
            }
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    private static func request(_ line: String) {
        precondition(!line.utf8.contains(UInt8(ascii: "\n")), "a control line holds a newline")
        let request: ControlRequest
        do {
            request = try ControlRequest(line: line)
        } catch {
            precondition(!error.description.isEmpty, "a refusal without a reason")
            return
        }
        guard let encoded = try? JSONEncoder().encode(request) else {
            preconditionFailure("a parsed control request does not encode")
        }
        let again = try? ControlRequest(line: String(decoding: encoded, as: UTF8.self))
        precondition(again == request, "a control request changed through encoding")
    }
}
