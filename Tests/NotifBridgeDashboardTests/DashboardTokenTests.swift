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
