import Foundation
import Logging
import NotifBridgeRelayCore
import PostgresNIO
import Synchronization

/// The relay's queues on PostgreSQL, for several relay instances sharing one database: the same
/// tables and rules as the SQLite store. Posts for one accessory are numbered under a lock on
/// its row, so two instances never hand out the same number; each batch's transaction ends with
/// `pg_notify`, and every instance listens, so an accessory's inbox open on one instance wakes
/// when another takes a post for it; an inbox that opens is announced the same way, and the
/// accessory's inbox open on another instance ends (one inbox per accessory). A commit returns
/// once the server has it on disk (`synchronous_commit`, on by default, checked when the store
/// opens).
public final class PostgresRelayStore: RelayStorage {
    public let limits: RelayLimits
    /// Tables live in this schema, so that one database can hold several relays (or tests).
    public let schema: String
    private let client: PostgresClient
    private let logger: Logger
    /// Names this instance in its notifications, so it does not wake itself twice.
    private let instance = UUID().uuidString
    private let events: AsyncStream<RelayElsewhere>
    private let eventsContinuation: AsyncStream<RelayElsewhere>.Continuation
    private let listening = ListeningSignal()

    public struct ConfigurationError: Error, CustomStringConvertible {
        public var description: String
    }

    /// - Parameter url: `postgres://user:password@host:port/database`; `?sslmode=require` asks
    ///   for TLS, else it is used when the server offers it.
    public init(url: String, schema: String = "public", limits: RelayLimits = RelayLimits(), logger: Logger) throws {
        guard schema.range(of: "^[a-z_][a-z0-9_]{0,62}$", options: .regularExpression) != nil else {
            throw ConfigurationError(description: "the PostgreSQL schema \(schema.debugDescription) is not a lower-case SQL identifier")
        }
        var configuration = try Self.configuration(url)
        configuration.options.additionalStartupParameters = [("search_path", schema)]
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.schema = schema
        self.limits = limits
        self.logger = logger
        (events, eventsContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
              let host = url.host, !host.isEmpty, let user = url.user, !user.isEmpty else {
            throw ConfigurationError(description: "a PostgreSQL URL looks like postgres://user:password@host:5432/database")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        let sslmode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch sslmode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        default: throw ConfigurationError(description: "sslmode must be disable, prefer or require, not \(sslmode.debugDescription)")
        }
        return PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: database.isEmpty ? nil : database, tls: tls
        )
    }

    private var channel: String { "\(schema)_relay_posted" }

    // MARK: Running

    /// The connection pool and the listener; the store is usable once ``prepare()`` returned.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask { await self.listen() }
        }
        eventsContinuation.finish()
    }

    /// Runs the store (``run()``), prepares it (``prepare()``), and keeps it running for as long
    /// as `body` runs.
    public func serving<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await self.run()
                return nil
            }
            defer { group.cancelAll() }
            // The pool warns when leased before its run() has begun.
            try await Task.sleep(for: .milliseconds(20))
            try await prepare(within: Self.connectTimeout)
            return try await body()
        }
    }

    /// How long ``serving(_:)`` waits for the database: the pool retries a refused connection or
    /// a wrong password for ever, and a relay that cannot reach its database should say so.
    public static let connectTimeout = Duration.seconds(10)

    private func prepare(within timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.prepare()
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else {
                throw ConfigurationError(description: "no usable connection to PostgreSQL within \(timeout): check the URL, the password (PGPASSWORD) and that the server runs (PostgresNIO logs the cause at the info level)")
            }
        }
    }

    /// Drops the schema with everything in it: for tests, which each use a schema of their own.
    @_spi(Testing) public func dropSchema() async throws {
        try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
    }

    /// Creates the tables if they are missing (under an advisory lock, so instances starting
    /// together do not race) and checks that commits are durable. Needs ``run()`` going.
    public func prepare() async throws {
        do {
            try await createTables()
        } catch {
            throw ConfigurationError(description: "cannot set up the relay's tables: \(String(reflecting: error))")
        }
        let mode = try await synchronousCommit()
        guard mode == "on" || mode == "remote_apply" || mode == "remote_write" else {
            throw ConfigurationError(description: "the server's synchronous_commit is \(mode): an accepted post could be lost in a crash; set it to on")
        }
    }

    private func createTables() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7420117)", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS relay_accessory (
                    id TEXT PRIMARY KEY,
                    inbox_digest BYTEA NOT NULL,
                    post_digest BYTEA NOT NULL,
                    next_seq BIGINT NOT NULL,
                    queued_messages BIGINT NOT NULL,
                    queued_bytes BIGINT NOT NULL
                )
                """, logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS relay_message (
                    accessory_id TEXT NOT NULL REFERENCES relay_accessory(id) ON DELETE CASCADE,
                    seq BIGINT NOT NULL,
                    body BYTEA NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (accessory_id, seq)
                )
                """, logger: logger)
            try await connection.query("CREATE INDEX IF NOT EXISTS relay_message_by_expiry ON relay_message(expires_at)", logger: logger)
            try await connection.query("ALTER TABLE relay_accessory ADD COLUMN IF NOT EXISTS push_token TEXT, ADD COLUMN IF NOT EXISTS push_bundle TEXT", logger: logger)
        }
    }

    /// `SHOW synchronous_commit`.
    public func synchronousCommit() async throws -> String {
        let rows = try await client.query("SHOW synchronous_commit", logger: logger).collect()
        return try rows.first?.decode(String.self) ?? ""
    }

    /// Waits until this instance listens for other instances' posts.
    public func waitUntilListening() async {
        await listening.wait()
    }

    public func elsewhere() -> AsyncStream<RelayElsewhere> {
        events
    }

    /// Payload `INSTANCE inbox ID`; a post's is `INSTANCE ID` (an ID holds no space).
    public func announceInbox(of id: String) async throws {
        try await client.query("SELECT pg_notify(\(channel), \(instance + " inbox " + id))", logger: logger)
    }

    /// LISTENs on one pooled connection for as long as the store runs, again after a failure.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        listening.signal()
                        for try await notification in notifications {
                            let parts = notification.payload.split(separator: " ")
                            guard parts.count >= 2, parts[0] != instance else { continue }
                            switch (parts.count, parts[1]) {
                            case (2, _): eventsContinuation.yield(.posted(String(parts[1])))
                            case (3, "inbox"): eventsContinuation.yield(.inboxOpened(String(parts[2])))
                            default: continue
                            }
                        }
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                guard !Task.isCancelled else { return }
                logger.notice("listening for other relay instances failed; again in a second", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    // MARK: RelayStorage

    public func register(accessory id: String, inbox: RelayToken, post: RelayToken) async throws {
        try RelayAccessoryID.validate(id)
        try await client.query("""
            INSERT INTO relay_accessory (id, inbox_digest, post_digest, next_seq, queued_messages, queued_bytes)
            VALUES (\(id), \(Data(inbox.digest)), \(Data(post.digest)), 1, 0, 0)
            ON CONFLICT (id) DO UPDATE SET inbox_digest = excluded.inbox_digest, post_digest = excluded.post_digest
            """, logger: logger)
    }

    public func authorizes(_ token: String, accessory id: String, as role: RelayRole) async throws -> Bool {
        guard (try? RelayAccessoryID.validate(id)) != nil else { return false }
        let query: PostgresQuery = role == .inbox
            ? "SELECT inbox_digest FROM relay_accessory WHERE id = \(id)"
            : "SELECT post_digest FROM relay_accessory WHERE id = \(id)"
        let stored = try await client.query(query, logger: logger).collect().first?.decode(Data.self)
        return RelayToken.matches(token, stored: Array(stored ?? Data(count: 32)))
    }

    public func inboxDigests(of ids: [String]) async throws -> [String: [UInt8]] {
        guard ids.count <= maxDigestLookup else { throw RelayError(.tooLarge, "at most \(maxDigestLookup) accessory IDs a lookup, not \(ids.count)") }
        guard !ids.isEmpty else { return [:] }
        var digests: [String: [UInt8]] = [:]
        for try await (id, digest) in try await client.query("SELECT id, inbox_digest FROM relay_accessory WHERE id = ANY(\(ids))", logger: logger).decode((String, Data).self) {
            digests[id] = Array(digest)
        }
        return digests
    }

    public func postBatch(_ posts: [(message: [UInt8], accessoryID: String)], now: Date) async throws -> [Result<UInt64, any Error>] {
        try await client.withTransaction(logger: logger) { connection in
            // The batch's accessory rows, all locked first in one order, the order forget and
            // sweep take them in: their IDs sorted by code point (Swift's order for these ASCII
            // IDs; the database's own collation may put "a" before "B"). Locked one by one in
            // the order of the posts, two instances' batches for A then B and for B then A
            // deadlocked, and PostgreSQL failed one of them whole.
            let ids = Set(posts.map(\.accessoryID)).sorted()
            _ = try await connection.query(
                #"SELECT id FROM relay_accessory WHERE id = ANY(\#(ids)) ORDER BY id COLLATE "C" FOR UPDATE"#, logger: logger
            ).collect()
            var results: [Result<UInt64, any Error>] = []
            var woken: Set<String> = []
            for post in posts {
                let id = post.accessoryID
                let rows = try await connection.query(
                    "SELECT next_seq, queued_messages, queued_bytes FROM relay_accessory WHERE id = \(id) FOR UPDATE", logger: logger
                ).collect()
                guard let (seq, messages, bytes) = try rows.first?.decode((Int64, Int64, Int64).self) else {
                    results.append(.failure(UnknownRelayAccessory(id: id)))
                    continue
                }
                let expires: Date
                do {
                    expires = try RelayAdmission.admit(length: post.message.count, to: .init(messages: Int(messages), bytes: Int(bytes)), now: now, limits: limits)
                } catch {
                    results.append(.failure(error))
                    continue
                }
                try await connection.query(
                    "INSERT INTO relay_message (accessory_id, seq, body, expires_at) VALUES (\(id), \(seq), \(Data(post.message)), \(expires.timeIntervalSince1970))",
                    logger: logger
                )
                try await connection.query(
                    "UPDATE relay_accessory SET next_seq = next_seq + 1, queued_messages = queued_messages + 1, queued_bytes = queued_bytes + \(Int64(post.message.count)) WHERE id = \(id)",
                    logger: logger
                )
                woken.insert(id)
                results.append(.success(UInt64(seq)))
            }
            // Delivered to the listeners when the transaction commits, not before.
            for id in woken.sorted() {
                try await connection.query("SELECT pg_notify(\(channel), \(instance + " " + id))", logger: logger)
            }
            return results
        }
    }

    public func fetch(for id: String, after: UInt64, limit: Int, now: Date) async throws -> [(seq: UInt64, message: [UInt8])] {
        let rows = try await client.query(
            "SELECT seq, body FROM relay_message WHERE accessory_id = \(id) AND seq > \(Int64(clamping: after)) AND expires_at > \(now.timeIntervalSince1970) ORDER BY seq LIMIT \(Int64(limit))",
            logger: logger
        ).collect()
        return try rows.map { row in
            let (seq, body) = try row.decode((Int64, Data).self)
            return (UInt64(seq), Array(body))
        }
    }

    public func forget(for id: String, upTo: UInt64) async throws {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM relay_message WHERE accessory_id = \(id) AND seq <= \(Int64(clamping: upTo)) RETURNING accessory_id, length(body)",
                logger: logger
            ).collect()
            try await Self.subtract(rows, on: connection, logger: logger)
        }
    }

    @discardableResult
    public func sweep(now: Date) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM relay_message WHERE expires_at <= \(now.timeIntervalSince1970) RETURNING accessory_id, length(body)", logger: logger
            ).collect()
            try await Self.subtract(rows, on: connection, logger: logger)
            return rows.count
        }
    }

    public func setPushTarget(_ target: PushTarget, accessory id: String) async throws {
        let rows = try await client.query(
            "UPDATE relay_accessory SET push_token = \(target.token), push_bundle = \(target.bundleID) WHERE id = \(id) RETURNING id", logger: logger
        ).collect()
        guard rows.count == 1 else { throw UnknownRelayAccessory(id: id) }
    }

    public func pushTarget(of id: String) async throws -> PushTarget? {
        let rows = try await client.query("SELECT push_token, push_bundle FROM relay_accessory WHERE id = \(id)", logger: logger).collect()
        guard let (token, bundle) = try rows.first?.decode((String?, String?).self), let token, let bundle else { return nil }
        return try PushTarget(token: token, bundleID: bundle)
    }

    public func queue(of id: String) async throws -> RelayAdmission.Queue? {
        let rows = try await client.query("SELECT queued_messages, queued_bytes FROM relay_accessory WHERE id = \(id)", logger: logger).collect()
        return try rows.first.map { row in
            let (messages, bytes) = try row.decode((Int64, Int64).self)
            return RelayAdmission.Queue(messages: Int(messages), bytes: Int(bytes))
        }
    }

    /// Takes deleted messages off their accessories' totals, in the caller's transaction.
    private static func subtract(_ deleted: [PostgresRow], on connection: PostgresConnection, logger: Logger) async throws {
        var totals: [String: (messages: Int64, bytes: Int64)] = [:]
        for row in deleted {
            let (id, size) = try row.decode((String, Int32).self)
            totals[id, default: (0, 0)].messages += 1
            totals[id, default: (0, 0)].bytes += Int64(size)
        }
        for (id, total) in totals.sorted(by: { $0.key < $1.key }) {
            try await connection.query(
                "UPDATE relay_accessory SET queued_messages = queued_messages - \(total.messages), queued_bytes = queued_bytes - \(total.bytes) WHERE id = \(id)",
                logger: logger
            )
        }
    }
}

/// Set once: the listener is in place.
private final class ListeningSignal: Sendable {
    private let state = Mutex<(ready: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func signal() {
        let waiters = state.withLock { state in
            state.ready = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if !state.ready { state.waiters.append(continuation) }
                return state.ready
            }
            if ready { continuation.resume() }
        }
    }
}
