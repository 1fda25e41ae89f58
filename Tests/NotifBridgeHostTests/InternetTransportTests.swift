import Foundation
import NotifBridgeCrypto
import NotifBridgeHost
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Synchronization
import Testing

/// The iPhone's internet state on disk: 0600, replaced whole, and saved before each message
/// leaves, so that a message key is never used twice, whatever happens to the post.
@Suite("Internet transport state")
struct InternetTransportTests {
    static func pairing() throws -> InternetPairing {
        let key = try AccessoryPrivateKey(suite: .xWing, secretRepresentation: Data(0..<32))
        return InternetPairing(
            exchangeID: 0x0102_0304_0506_0708, sessionID: UUID(uuidString: "9F3C2A10-5B6D-4E7F-8A9B-0C1D2E3F4A5B")!,
            keyID: InternetRatchet.keyID(publicKey: key.publicKeyRepresentation),
            sending: .init(chainKey: Data(repeating: 0x11, count: 32)), receiving: .init(chainKey: Data(repeating: 0x22, count: 32)),
            nextSequence: 1
        )
    }

    static let add = HostOperation.add(HostNotification(source: "com.apple.MobileSMS", id: "n1", sourceName: "Messages", title: "Anna", body: "hi"), .standard)

    @Test("saved 0600 and read back the same")
    func roundTrip() throws {
        let directory = try TemporaryDirectory("internet-pairing")
        defer { directory.remove() }
        let file = InternetPairingFile(path: directory.path + "/pairing.json")
        #expect(try file.load() == nil)
        let pairing = try Self.pairing()
        try file.save(pairing)
        #expect(try file.load() == pairing)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }

    @Test("a readable-by-others file, a foreign file and keys of the wrong length are refused, each saying why", arguments: [
        ("mode", 0o644, #"{"a":1}"#),
        ("foreign", 0o600, #"{"a":1}"#),
        ("short key", 0o600, ""),
    ])
    func refusals(_ what: String, _ mode: Int, _ contents: String) throws {
        let directory = try TemporaryDirectory("internet-pairing-bad")
        defer { directory.remove() }
        let path = directory.path + "/pairing.json"
        var bytes = Data(contents.utf8)
        if what == "short key" {
            var pairing = try Self.pairing()
            pairing.sending.chainKey = Data(repeating: 1, count: 31)
            bytes = try JSONEncoder().encode(pairing)
        } else if what == "mode" {
            bytes = try JSONEncoder().encode(try Self.pairing())
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        let error = #expect(throws: InternetPairingFile.Failure.self) { try InternetPairingFile(path: path).load() }
        let expected = ["mode": "must be 600", "foreign": "is not an internet pairing", "short key": "wrong length"][what]!
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "")")
    }

    /// `phone --internet-pairing identity-xwing.key` once replaced the accessory's own key.
    @Test("save never replaces a file that is not a pairing: a key file, a readable text file, a directory", arguments: [
        ("key file", 0o600, #"{"format":1,"secret":"AAEC","suite":"XWing"}"#),
        ("text file", 0o644, "shared notes\n"),
        ("directory", 0o700, ""),
    ])
    func saveRefusesOtherFiles(_ what: String, _ mode: Int, _ contents: String) throws {
        let directory = try TemporaryDirectory("internet-pairing-victim")
        defer { directory.remove() }
        let path = directory.path + "/victim"
        if what == "directory" {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } else {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        }
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        let file = InternetPairingFile(path: path)
        let error = #expect(throws: InternetPairingFile.Failure.self) { try file.save(try Self.pairing()) }
        #expect(error?.description.hasPrefix("will not save the internet pairing over \(path): ") == true, "\(error?.description ?? "")")
        #expect(error?.description.hasSuffix("; give --internet-pairing a path of its own") == true)
        #expect(throws: InternetPairingFile.Failure.self) { try file.checkReplaceable() }
        if what != "directory" {
            #expect(try String(contentsOfFile: path, encoding: .utf8) == contents)
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == mode)
        }
    }

    @Test("a pairing file is read up to its limit: a pairing padded to the limit loads, one byte more is refused", arguments: [0, 1])
    func lengthLimit(over: Int) throws {
        let directory = try TemporaryDirectory("internet-pairing-long")
        defer { directory.remove() }
        let path = directory.path + "/pairing.json"
        var bytes = try JSONEncoder().encode(try Self.pairing())
        bytes.append(Data(repeating: UInt8(ascii: " "), count: InternetPairingFile.maxFileLength - bytes.count + over))
        try bytes.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let file = InternetPairingFile(path: path)
        if over == 0 {
            #expect(try file.load() == (try Self.pairing()))
            try file.save(try Self.pairing())
        } else {
            let error = #expect(throws: InternetPairingFile.Failure.self) { try file.load() }
            #expect(error?.description == "cannot read the internet pairing \(path): it is longer than \(InternetPairingFile.maxFileLength) bytes")
        }
    }

    @Test("the state after the seal is on disk before the post; a failed post has used its index all the same")
    func savedBeforePost() async throws {
        let directory = try TemporaryDirectory("internet-transport")
        defer { directory.remove() }
        let file = InternetPairingFile(path: directory.path + "/pairing.json")
        try file.save(try Self.pairing())
        let seenOnDisk = Mutex<[UInt32]>([])
        let failNext = Mutex(false)
        let transport = try InternetTransport(file: file) { message throws(AccessoryMessageError) in
            let onDisk = (try? file.load())?.sending.nextIndex ?? 0
            seenOnDisk.withLock { $0.append(onDisk) }
            if failNext.withLock({ $0 }) { throw .transportUnavailable }
        }
        #expect(try await transport.send(Self.add) == 1)
        failNext.withLock { $0 = true }
        await #expect(throws: AccessoryMessageError.transportUnavailable) { try await transport.send(Self.add) }
        failNext.withLock { $0 = false }
        #expect(try await transport.send(Self.add) == 3)
        #expect(seenOnDisk.withLock { $0 } == [1, 2, 3])
        #expect(try file.load()?.sending.nextIndex == 3)
        #expect(try file.load()?.nextSequence == 4)
        // A new process reading the file goes on from there.
        #expect(try InternetTransport(file: file) { _ throws(AccessoryMessageError) in }.pairing.sending.nextIndex == 3)
    }

    @Test("without a saved pairing the transport says how to make one")
    func noPairing() throws {
        let directory = try TemporaryDirectory("internet-transport-none")
        defer { directory.remove() }
        let error = #expect(throws: InternetPairingFile.Failure.self) {
            try InternetTransport(file: InternetPairingFile(path: directory.path + "/none.json")) { _ throws(AccessoryMessageError) in }
        }
        #expect(error?.description.contains("--internet-pairing") == true)
    }
}
