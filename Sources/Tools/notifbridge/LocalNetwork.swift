import ArgumentParser
import Foundation
import Logging
import NotifBridgeAccessory
import NotifBridgeCrypto
import NotifBridgeDisplay
import NotifBridgeTCP
import Synchronization
#if canImport(NotifBridgeDNSSD)
import NotifBridgeDNSSD
#endif

/// The local-network transport in the command line: the accessory announces its TCP listener
/// with DNS-SD, and the simulated iPhone finds it (docs/PROTOCOL.md §2.3).
enum LocalNetwork {
    /// A --service-name given by hand is taken whole or refused: announced, it would be cut to one
    /// DNS label, and a phone looking for the whole name would never find it.
    static func checkServiceName(_ name: String?) throws {
        #if canImport(NotifBridgeDNSSD)
        guard let name else { return }
        guard !name.isEmpty else { throw ValidationError("--service-name must not be empty (leave it out for \"\(defaultServiceName)\")") }
        guard name.utf8.count <= NotifBridgeService.maxNameBytes else {
            throw ValidationError("--service-name is \(name.utf8.count) bytes; a DNS-SD instance name is at most \(NotifBridgeService.maxNameBytes)")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ValidationError("--service-name must not hold control characters")
        }
        #endif
    }

    /// "NotifBridge on <host name>", the instance name when --service-name is not given.
    static var defaultServiceName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return host.isEmpty ? "NotifBridge" : "NotifBridge on \(host)"
    }

    /// Starts announcing the listener once it has its port. A missing avahi-daemon costs one
    /// warning, never the accessory: the TCP link works without discovery.
    static func announce(name: String, port: Int, keyID: [UInt8], logger: Logger) {
        #if canImport(NotifBridgeDNSSD)
        Task {
            do {
                let publication = try await Avahi.publish(name: name, port: port, txt: .init(keyID: keyID))
                published.withLock { $0.append(publication) }
                logger.notice("announced \"\(publication.name)\" (\(NotifBridgeService.type)) on port \(port)")
            } catch {
                logger.warning("not announced on the local network: \(error)")
            }
        }
        #else
        logger.warning("not announced on the local network: this build has no DNS-SD (Linux only)")
        #endif
    }

    #if canImport(NotifBridgeDNSSD)
    /// Kept for the life of the process: avahi-daemon withdraws the record when its connection closes.
    private static let published = Mutex<[Avahi.Publication]>([])
    #endif

    /// Finds the accessory: the first instance (by name) that speaks this protocol, or the one
    /// named or with the key ID asked for. Returns that key ID too, for the link to hold the
    /// exchange to: anyone on the network can announce any record.
    static func discover(seconds: Double, name: String?, keyID: String?) async throws -> (host: String, port: Int, keyID: Data?) {
        #if canImport(NotifBridgeDNSSD)
        var wanted: [UInt8]?
        if let keyID {
            guard let parsed = try? NotifBridgeService.TXT(entries: [Array("v=1".utf8), Array("key=\(keyID)".utf8)]) else {
                throw CommandFailure("--key-id must be 16 hex digits, as the accessory prints it")
            }
            wanted = parsed.keyID
        }
        let instances: [NotifBridgeService.Instance]
        do {
            instances = try await Avahi.browse(for: .seconds(seconds))
        } catch {
            throw CommandFailure("cannot browse the local network: \(error)")
        }
        for instance in instances {
            // Names and host names are whatever someone on the network announced.
            if case .failure(let problem) = instance.txt { print("phone │ skipped \"\(terminalSafe(instance.name))\": \(problem)") }
        }
        guard let chosen = NotifBridgeService.choose(instances, name: name, keyID: wanted) else {
            let seen = instances.map { "\"\(terminalSafe($0.name))\"" }.joined(separator: ", ")
            throw CommandFailure("no NotifBridge accessory\(name.map { " named \"\(terminalSafe($0))\"" } ?? "")\(keyID.map { " with key \($0)" } ?? "") found on the local network in \(seconds) s\(seen.isEmpty ? "" : "; seen: \(seen)")")
        }
        print("phone │ found \"\(terminalSafe(chosen.name))\" at \(terminalSafe(chosen.address)):\(chosen.port) (\(terminalSafe(chosen.hostName)))")
        return (chosen.address, chosen.port, wanted.map { Data($0) })
        #else
        throw CommandFailure("--transport lan needs DNS-SD through avahi-daemon, which this build does not include (Linux only)")
        #endif
    }
}
