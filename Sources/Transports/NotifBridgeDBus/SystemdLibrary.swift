import CSystemdBus

/// libsystemd, opened at run time: nothing links it, so the executable starts (and everything
/// but D-Bus works) on a machine without it, and building needs no libsystemd-dev.
enum SystemdLibrary {
    /// The runtime library of Debian's libsystemd0, present wherever systemd is.
    static let soname = "libsystemd.so.0"

    /// Loaded once per process, on the first D-Bus use.
    private static let loaded: Result<Void, DBusError> = load(soname, install: true)

    /// Throws why D-Bus cannot be used here; afterwards every sd_bus_* function may be called.
    static func require() throws(DBusError) {
        try loaded.get()
    }

    /// Opens `soname` and finds every sd-bus function NotifBridge calls. `install` makes it the
    /// library those calls go to; without it this only checks.
    static func load(_ soname: String, install: Bool) -> Result<Void, DBusError> {
        var missing = [CChar](repeating: 0, count: 128)
        let result = nb_sd_bus_load(soname, install ? 1 : 0, &missing, missing.count)
        switch result {
        case NB_SD_BUS_LOADED:
            return .success(())
        case NB_SD_BUS_LIBRARY_MISSING:
            return .failure(.libraryUnavailable(
                "\(soname) not found: D-Bus and Bluetooth need systemd's runtime library (Debian package libsystemd0)"
            ))
        default:
            let function = String(decoding: missing.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(.libraryUnavailable(
                "\(soname) has no \(function): D-Bus and Bluetooth need the sd-bus of systemd 252 or a later one"
            ))
        }
    }
}
