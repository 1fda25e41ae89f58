import Foundation
import Logging
import NotifBridgeRelayCore
@_spi(Testing) import NotifBridgeRelayPostgres

/// A PostgreSQL database the tests may create schemas in. `.ci/run` installs and starts Debian's
/// PostgreSQL and sets `NOTIFBRIDGE_TEST_POSTGRES`; without it (a fresh machine running `swift
/// test`) these tests are skipped.
public enum TestPostgres {
    public static let url = ProcessInfo.processInfo.environment["NOTIFBRIDGE_TEST_POSTGRES"]

    /// A schema of its own for each test, so tests run side by side and leave nothing behind.
    public static func freshSchema() -> String {
        "t" + (0..<12).map { _ in String(Int.random(in: 0..<36), radix: 36) }.joined()
    }

    public static func store(schema: String, limits: RelayLimits = RelayLimits()) throws -> PostgresRelayStore {
        try PostgresRelayStore(url: url ?? "postgres://unset@127.0.0.1/unset", schema: schema, limits: limits, logger: Logger(label: "relay-pg", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Runs `count` relay instances' stores on one fresh schema for the duration of `body`,
    /// then drops the schema.
    public static func withStores<T: Sendable>(_ count: Int, limits: RelayLimits = RelayLimits(), _ body: @Sendable ([PostgresRelayStore]) async throws -> T) async throws -> T {
        let schema = freshSchema()
        let stores = try (0..<count).map { _ in try store(schema: schema, limits: limits) }
        return try await nest(stores[...]) {
            do {
                let result = try await body(stores)
                try await stores[0].dropSchema()
                return result
            } catch {
                try? await stores[0].dropSchema()
                throw error
            }
        }
    }

    private static func nest<T: Sendable>(_ stores: ArraySlice<PostgresRelayStore>, _ body: @Sendable () async throws -> T) async throws -> T {
        guard let first = stores.first else { return try await body() }
        return try await first.serving { try await nest(stores.dropFirst(), body) }
    }
}

