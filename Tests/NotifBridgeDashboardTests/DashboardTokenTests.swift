import Foundation
import NotifBridgeTestSupport
import Testing
@testable import NotifBridgeDashboard

@Suite("Dashboard token")
struct DashboardTokenTests {
    @Test("Made once as 64 hex digits in a 0600 file, then loaded unchanged")
    func madeOnce() throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let (first, _) = try DashboardToken.loadOrCreate(in: directory.path)
        #expect(first.value.count == 64)
        let path = directory.path + "/" + DashboardToken.fileName
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let (again, tightened) = try DashboardToken.loadOrCreate(in: directory.path)
        #expect(again == first && !tightened)
    }

    @Test("A file others can read is tightened to 0600")
    func tightened() throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        let path = directory.path + "/" + DashboardToken.fileName
        chmod(path, 0o644)
        let (again, tightened) = try DashboardToken.loadOrCreate(in: directory.path)
        #expect(again == token && tightened)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    @Test("A file that does not hold a token is refused with what to do", arguments: ["", "abc", String(repeating: "A", count: 64), String(repeating: "a", count: 65)])
    func refused(contents: String) throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let path = directory.path + "/" + DashboardToken.fileName
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        let error = #expect(throws: DashboardToken.Failure.self) { try DashboardToken.loadOrCreate(in: directory.path) }
        #expect(error?.description.contains("delete it") == true)
    }

    /// It used to chmod the link's target to 0600 before finding it held no token.
    @Test("A symbolic link is refused and its target left as it was; a directory is refused")
    func notAFileOfItsOwn() throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let target = directory.path + "/shared.conf"
        _ = FileManager.default.createFile(atPath: target, contents: Data("shared\n".utf8), attributes: [.posixPermissions: 0o644])
        let path = directory.path + "/" + DashboardToken.fileName
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        let error = #expect(throws: DashboardToken.Failure.self) { try DashboardToken.loadOrCreate(in: directory.path) }
        #expect(error?.description == "\(path) is a symbolic link; the token must be a file of its own (remove the link, and a new token is made)")
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o644)

        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let refused = #expect(throws: DashboardToken.Failure.self) { try DashboardToken.loadOrCreate(in: directory.path) }
        #expect(refused?.description == "\(path) is not a regular file; remove it, and a new token is made")
    }

    @Test("The file is read within its limit: padding up to it is fine, one byte more is refused", arguments: [0, 1])
    func lengthLimit(over: Int) throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let path = directory.path + "/" + DashboardToken.fileName
        let token = String(repeating: "ab", count: 32)
        let padded = token + String(repeating: "\n", count: DashboardToken.maxFileLength - 64 + over)
        _ = FileManager.default.createFile(atPath: path, contents: Data(padded.utf8), attributes: [.posixPermissions: 0o600])
        if over == 0 {
            #expect(try DashboardToken.loadOrCreate(in: directory.path).token.value == token)
        } else {
            let error = #expect(throws: DashboardToken.Failure.self) { try DashboardToken.loadOrCreate(in: directory.path) }
            #expect(error?.description == "cannot read \(path): it is longer than \(DashboardToken.maxFileLength) bytes")
        }
    }

    @Test("Matching: the same token only", arguments: [("", false), ("x", false)])
    func matching(candidate: String, matches: Bool) throws {
        let directory = try TemporaryDirectory("token")
        defer { directory.remove() }
        let (token, _) = try DashboardToken.loadOrCreate(in: directory.path)
        #expect(token.matches(Substring(candidate)) == matches)
        #expect(token.matches(Substring(token.value)))
        #expect(!token.matches(Substring(String(token.value.dropLast()) + (token.value.hasSuffix("0") ? "1" : "0"))))
    }
}
