import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a socket error says to a person. NIO's descriptions name its own calls and nest
/// parentheses (`Connection errors: SingleConnectionFailure(target: [IPv4]127.0.0.1/127.0.0.1:1,
/// error: connection reset (error set): Connection refused) (errno: 111))`); the system's message
/// and its errno are the parts that help, and a name that does not resolve should say so.
/// Errors that are not NIO's are described as they describe themselves.
public func socketErrorText(_ error: any Error) -> String {
    switch error {
    case let error as IOError:
        return "\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))"
    case let error as NIOConnectionError:
        if let first = error.connectionErrors.first {
            return socketErrorText(first.error)
        }
        if let resolution = error.dnsAAAAError ?? error.dnsAError {
            return socketErrorText(resolution)
        }
        return "\(error.host) has no address to connect to"
    case let error as SocketAddressError.UnknownHost:
        return "the name \(error.host) could not be resolved (\(error.errorDescription))"
    case let error as ChannelError:
        switch error {
        case .connectTimeout(let amount):
            let milliseconds = amount.nanoseconds / 1_000_000
            return milliseconds % 1000 == 0 ? "no answer within \(milliseconds / 1000) s" : "no answer within \(milliseconds) ms"
        case .ioOnClosedChannel, .alreadyClosed, .eof:
            return "the connection closed"
        default:
            return "\(error)"
        }
    default:
        return "\(error)"
    }
}
