import Foundation
@testable import NotifBridgeDBus
import Testing

@Suite("libsystemd at run time")
struct SystemdLibraryTests {
    @Test("a missing library is a plain error naming the package, not a crash")
    func missingLibrary() {
        let result = SystemdLibrary.load("libnotifbridge-absent.so.0", install: false)
        #expect(throws: DBusError.libraryUnavailable(
            "libnotifbridge-absent.so.0 not found: D-Bus and Bluetooth need systemd's runtime library (Debian package libsystemd0)"
        )) { try result.get() }
    }

    @Test("a library without sd-bus is refused by the first function it lacks")
    func libraryWithoutSdBus() {
        let result = SystemdLibrary.load("libc.so.6", install: false)
        #expect(throws: DBusError.libraryUnavailable(
            "libc.so.6 has no sd_bus_open_system: D-Bus and Bluetooth need the sd-bus of systemd 252 or a later one"
        )) { try result.get() }
    }

    @Test("this machine's libsystemd.so.0 has every function used")
    func installedLibrary() throws {
        try SystemdLibrary.load(SystemdLibrary.soname, install: false).get()
        try SystemdLibrary.require()
    }
}

/// The executables must start on a machine without libsystemd: only D-Bus needs it, and it is
/// opened at run time. The dynamic loader lists what an executable needs without running it
/// (LD_TRACE_LOADED_OBJECTS, what ldd does), so this checks the linkage itself, independent of
/// which tests already used D-Bus in this process.
@Suite("libsystemd linkage")
struct LinkageTests {
    @Test("neither the test bundle nor the notifbridge executable needs libsystemd to start")
    func noLibsystemdNeeded() throws {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var executables = [bundle]
        let notifbridge = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("notifbridge").path
        if FileManager.default.isExecutableFile(atPath: notifbridge) { executables.append(notifbridge) }
        for executable in executables {
            let libraries = try Self.librariesNeeded(by: executable)
            #expect(libraries.contains("libc.so.6"), "the loader listed \(executable)'s libraries")
            #expect(!libraries.contains { $0.hasPrefix("libsystemd") }, "\(executable) needs \(libraries.filter { $0.hasPrefix("libsystemd") })")
        }
    }

    /// The sonames the dynamic loader would load for `executable`, from its trace.
    static func librariesNeeded(by executable: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.environment = ["LD_TRACE_LOADED_OBJECTS": "1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            $0.split(whereSeparator: \.isWhitespace).first.map(String.init)
        }
    }
}
