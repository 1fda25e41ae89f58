import NIOCore

extension SocketAddress {
    /// How a peer is named to a person: `192.0.2.1:54321`, `[2001:db8::1]:54321`, or a socket
    /// path. NIO's own description (`[IPv4]192.0.2.1/192.0.2.1:54321`) repeats the address and
    /// would reach the terminal and the dashboard as it is.
    var peerLabel: String {
        switch self {
        case .v4:
            return "\(ipAddress ?? "?"):\(port ?? 0)"
        case .v6:
            return "[\(ipAddress ?? "?")]:\(port ?? 0)"
        case .unixDomainSocket:
            return description
        }
    }
}

/// `host:port`, with an IPv6 address in brackets (`[::1]:7420`) so that the port stands apart.
public func hostAndPort(_ host: String, _ port: Int) -> String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
}
