import NotifBridgeDBus

/// A private bus with two connections on it, as most bus tests want: one that serves and one
/// that calls. `close()` closes both and stops the bus.
public struct BusPair {
    public let daemon: PrivateBusDaemon
    public let server: DBusConnection
    public let client: DBusConnection

    public static func open() async throws -> BusPair {
        let daemon = try PrivateBusDaemon()
        do {
            let server = try await DBusConnection.connect(to: daemon.address)
            do {
                return BusPair(daemon: daemon, server: server, client: try await DBusConnection.connect(to: daemon.address))
            } catch {
                server.close()
                throw error
            }
        } catch {
            daemon.stop()
            throw error
        }
    }

    public func close() {
        client.close()
        server.close()
        daemon.stop()
    }
}
