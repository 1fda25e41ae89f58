import Foundation
import GRDB
import NotifBridgeAccessoryCore
import NotifBridgeCrypto

/// The internet transport's ratchets (docs/PROTOCOL.md §10), one pair per key exchange.
///
/// Receiving: the state is saved after every message that opens, as the changes that message
/// made (a chain row, a used key deleted, skipped keys added, the oldest dropped), so a message
/// costs a few rows however many keys are kept. Save it in the transaction that stores the
/// message's event (`applyBatch(_:opened:…)`): saving first and crashing before the event was
/// stored would lose the event, its key already gone; storing the event alone and crashing would
/// open it again after a restart, which the ledger takes as a duplicate.
///
/// Sending: `sealForInternet` moves the chain and commits before it returns the message, so a
/// crash after transmitting can never seal a second message under the same key.
extension AccessoryStore {
    public struct RatchetStoreError: Error, Hashable, CustomStringConvertible {
        public var description: String
    }

    static func createRatchetTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE ratchet_chain (
                exchange_id INTEGER NOT NULL REFERENCES key_exchange(exchange_id) ON DELETE CASCADE,
                direction TEXT NOT NULL CHECK (direction IN ('host-to-accessory', 'accessory-to-host')),
                key_id BLOB NOT NULL,
                chain_key BLOB NOT NULL CHECK (length(chain_key) = 32),
                next_index INTEGER NOT NULL CHECK (next_index BETWEEN 0 AND 4294967295),
                PRIMARY KEY (exchange_id, direction)
            ) WITHOUT ROWID;
            CREATE TABLE ratchet_skipped_key (
                exchange_id INTEGER NOT NULL REFERENCES key_exchange(exchange_id) ON DELETE CASCADE,
                message_index INTEGER NOT NULL,
                message_key BLOB NOT NULL,
                PRIMARY KEY (exchange_id, message_index)
            ) WITHOUT ROWID;
            """)
    }

    private static func column(_ direction: Direction) -> String {
        switch direction {
        case .hostToAccessory: "host-to-accessory"
        case .accessoryToHost: "accessory-to-host"
        }
    }

    /// Starts both ratchets of a stored exchange at index 0 from its exported chain keys, and
    /// returns true; returns false and changes nothing when they exist already: restarting a
    /// ratchet that has moved would reuse its keys. A new exchange starts them with
    /// `saveExchange(_:keyID:now:internet:)`, in the transaction that saves it.
    @discardableResult
    public func startInternetRatchets(exchangeID: UInt64, keyID: [UInt8], chainKeys: InternetChainKeys) throws -> Bool {
        try Self.checkInternetKeyID(keyID)
        return try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM key_exchange WHERE exchange_id = ?", arguments: [Int64(bitPattern: exchangeID)]) != nil else {
                throw UnknownExchange(exchangeID: exchangeID)
            }
            return try Self.startRatchets(db, exchangeID: exchangeID, InternetRatchetStart(keyID: keyID, chainKeys: chainKeys))
        }
    }

    static func checkInternetKeyID(_ keyID: [UInt8]) throws {
        guard keyID.count == InternetRatchet.keyIDLength else {
            throw RatchetStoreError(description: "an internet key ID is \(InternetRatchet.keyIDLength) bytes, got \(keyID.count)")
        }
    }

    /// Inserts both chains at index 0 unless they exist; true if any was new. Only an existing
    /// chain is passed over (not `OR IGNORE`, which would also pass over a chain key the table's
    /// CHECK refuses and leave the exchange without that ratchet).
    @discardableResult
    static func startRatchets(_ db: Database, exchangeID: UInt64, _ start: InternetRatchetStart) throws -> Bool {
        let id = Int64(bitPattern: exchangeID)
        var started = false
        for direction in [Direction.hostToAccessory, .accessoryToHost] {
            try db.execute(
                sql: "INSERT INTO ratchet_chain (exchange_id, direction, key_id, chain_key, next_index) VALUES (?, ?, ?, ?, 0) ON CONFLICT DO NOTHING",
                arguments: [id, Self.column(direction), Data(start.keyID), start.chainKeys.chainKey(for: direction)]
            )
            started = started || db.changesCount > 0
        }
        return started
    }

    /// The receiving ratchet of an exchange as last saved, with its internet key ID; nil if
    /// none was started. A row no receiver could have written is refused, saying what is wrong.
    public func receivingRatchet(exchangeID: UInt64, maxSkippedKeys: Int = InternetRatchet.maxSkippedKeys) throws -> (ratchet: ReceivingRatchet, keyID: [UInt8])? {
        try read { db -> (ratchet: ReceivingRatchet, keyID: [UInt8])? in
            let id = Int64(bitPattern: exchangeID)
            guard let row = try Self.chainRow(db, id, .hostToAccessory) else { return nil }
            let skipped = try Row.fetchAll(
                db,
                sql: "SELECT message_index, message_key FROM ratchet_skipped_key WHERE exchange_id = ? ORDER BY message_index",
                arguments: [id]
            ).map { row in
                ReceivingRatchet.Snapshot.SkippedKey(index: try Self.index(row["message_index"], exchangeID), key: row["message_key"])
            }
            let snapshot = ReceivingRatchet.Snapshot(chainKey: row.chainKey, nextIndex: row.nextIndex, skipped: skipped)
            do {
                return (try ReceivingRatchet(snapshot: snapshot, maxSkippedKeys: maxSkippedKeys), row.keyID)
            } catch {
                throw RatchetStoreError(description: "the stored receiving ratchet of exchange \(exchangeHex(exchangeID)) is damaged: \(error)")
            }
        }
    }

    /// Whether the exchange's receiving ratchet was started, without loading its kept keys
    /// (up to ``InternetRatchet/maxSkippedKeys`` of them).
    public func hasReceivingRatchet(exchangeID: UInt64) throws -> Bool {
        try read { db in
            try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM ratchet_chain WHERE exchange_id = ? AND direction = ?)",
                arguments: [Int64(bitPattern: exchangeID), Self.column(.hostToAccessory)]
            ) ?? false
        }
    }

    /// Saves what opening one message changed, in a transaction of its own. Prefer
    /// `applyBatch(_:opened:…)`, which saves it with the message's event.
    public func saveOpened(_ changes: ReceivingRatchet.Changes, exchangeID: UInt64) throws {
        try write { db in try Self.save(changes, exchangeID: exchangeID, db) }
    }

    /// Seals `plaintext` with the next key of the exchange's sending ratchet and commits the moved
    /// chain before returning the message to transmit.
    public func sealForInternet(_ plaintext: some DataProtocol, exchangeID: UInt64, nonces: NonceSource = .system) throws -> RatchetMessage {
        try write { db in
            let id = Int64(bitPattern: exchangeID)
            guard let row = try Self.chainRow(db, id, .accessoryToHost) else {
                throw RatchetStoreError(description: "exchange \(exchangeHex(exchangeID)) has no internet ratchet")
            }
            var ratchet = try SendingRatchet(chainKey: row.chainKey, nextIndex: row.nextIndex)
            let message = try ratchet.seal(plaintext, keyID: row.keyID, nonces: nonces)
            try db.execute(
                cached: "UPDATE ratchet_chain SET chain_key = ?, next_index = ? WHERE exchange_id = ? AND direction = ?",
                arguments: [ratchet.chainKeyBytes, Int64(ratchet.nextIndex), id, Self.column(.accessoryToHost)]
            )
            return message
        }
    }

    /// Records the feature (transport session) whose messages the exchange decrypted: replies
    /// over the internet name it. Only a feature a message decrypted under is recorded, never one
    /// a link merely bound.
    public func saveFeatureID(_ featureID: String, exchangeID: UInt64) throws {
        try write { db in
            try db.execute(sql: "UPDATE key_exchange SET feature_id = ? WHERE exchange_id = ?", arguments: [featureID, Int64(bitPattern: exchangeID)])
        }
    }

    /// Where a reply over the internet goes: the newest active exchange with internet ratchets
    /// and a recorded feature; nil when there is none (no X-Wing exchange has carried a message).
    public func internetReplyTarget() throws -> (exchangeID: UInt64, featureID: String)? {
        try read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT exchange_id, feature_id FROM key_exchange
                WHERE active AND feature_id IS NOT NULL
                  AND EXISTS (SELECT 1 FROM ratchet_chain WHERE ratchet_chain.exchange_id = key_exchange.exchange_id AND direction = 'accessory-to-host')
                ORDER BY epoch DESC LIMIT 1
                """)
            guard let row, let featureID: String = row["feature_id"] else { return nil }
            let id: Int64 = row["exchange_id"]
            return (UInt64(bitPattern: id), featureID)
        }
    }

    /// Writes one message's changes, only over the state they were made from: the stored next
    /// index must be the one the message started from, and every key it spent or evicted must
    /// still be stored. Changes from a stale copy of the ratchet fail either check (a second
    /// opening of one message finds its key gone, or the chain moved), so no message opens twice
    /// and no spent key comes back; the error rolls back the transaction it is in.
    static func save(_ changes: ReceivingRatchet.Changes, exchangeID: UInt64, _ db: Database) throws {
        let id = Int64(bitPattern: exchangeID)
        func refuse(_ what: String) -> RatchetStoreError {
            RatchetStoreError(description: "exchange \(exchangeHex(exchangeID)): \(what); the changes come from a stale copy of the receiving ratchet and are not saved")
        }
        try db.execute(
            cached: "UPDATE ratchet_chain SET chain_key = ?, next_index = ? WHERE exchange_id = ? AND direction = 'host-to-accessory' AND next_index = ?",
            arguments: [changes.chainKey, Int64(changes.nextIndex), id, Int64(changes.previousNextIndex)]
        )
        guard db.changesCount == 1 else {
            throw refuse("no receiving ratchet at index \(changes.previousNextIndex) to move to \(changes.nextIndex)")
        }
        for index in [changes.spent].compactMap({ $0 }) + changes.evicted {
            try db.execute(cached: "DELETE FROM ratchet_skipped_key WHERE exchange_id = ? AND message_index = ?", arguments: [id, Int64(index)])
            guard db.changesCount == 1 else {
                throw refuse("the key of message \(index) is not stored (spent before)")
            }
        }
        for kept in changes.kept {
            try db.execute(
                cached: "INSERT INTO ratchet_skipped_key (exchange_id, message_index, message_key) VALUES (?, ?, ?)",
                arguments: [id, Int64(kept.index), kept.key]
            )
        }
    }

    private struct ChainRow {
        var keyID: [UInt8]
        var chainKey: Data
        var nextIndex: UInt32
    }

    private static func chainRow(_ db: Database, _ id: Int64, _ direction: Direction) throws -> ChainRow? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT key_id, chain_key, next_index FROM ratchet_chain WHERE exchange_id = ? AND direction = ?"),
            arguments: [id, column(direction)]
        ) else { return nil }
        let keyID: Data = row["key_id"]
        return ChainRow(keyID: Array(keyID), chainKey: row["chain_key"], nextIndex: try index(row["next_index"], UInt64(bitPattern: id)))
    }

    private static func index(_ value: Int64, _ exchangeID: UInt64) throws -> UInt32 {
        guard let index = UInt32(exactly: value) else {
            throw RatchetStoreError(description: "the stored ratchet of exchange \(exchangeHex(exchangeID)) has index \(value), outside 0…\(UInt32.max)")
        }
        return index
    }
}
