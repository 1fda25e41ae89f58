import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotifBridgeCrypto
import NotifBridgeHostCore
import NotifBridgeRelay
import NotifBridgeRelayClient
import NotifBridgeRelayCore
import NotifBridgeRelayStore
import NotifBridgeWire
import ServiceLifecycle
import Synchronization

/// The relay on loopback (docs/PROTOCOL.md §11), in this process, its SQLite file under TMPDIR:
/// posts of a typical sealed notification over HTTP (each answered once fsynced), one at a time
/// and from `posters` concurrent clients, then the accessory's inbox client taking everything
/// and acknowledging each message: messages per second and the latency of a post.
func relayReport(posters: Int = 8) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nb-relay-bench-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try RelayStore(path: directory + "/relay.sqlite", limits: RelayLimits(maxQueuedMessages: count * 2 + 10))
    let inbox = try RelayToken(randomBytes: Array(repeating: 1, count: 32)), post = try RelayToken(randomBytes: Array(repeating: 2, count: 32))
    try store.register(accessory: "bench", inbox: inbox, post: post)

    var event = HostEvent()
    event.sequence = 1
    event.event = try DataProvider.event(for: SampleNotifications.typical(index: 1), now: Date())
    var sender = try SendingRatchet(chainKey: Data(repeating: 0x5a, count: 32))
    let message = Array(try sender.seal(WireCodec.encode(event), keyID: [1, 2, 3, 4]).serialized)

    let quiet = Logger(label: "relay-bench", factory: { _ in SwiftLogNoOpLogHandler() })
    // As `relay serve` runs it (statements on NIO's thread pool), or NB_RELAY_STORE=blocking for
    // the store's own methods on the shared threads, to compare.
    let blocking = ProcessInfo.processInfo.environment["NB_RELAY_STORE"] == "blocking"
    let relayStore: any RelayStorage = blocking ? store : ServingRelayStore(store)
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let application = RelayServer(
        // The post rate out of the way: this measures the store and the server, not the limit.
        store: relayStore, configuration: .init(port: 0, postRate: RateLimit(burst: count * 4, interval: .milliseconds(1))), logger: quiet
    ).application { portContinuation.yield($0) }
    let group = ServiceGroup(configuration: .init(services: [.init(service: application)], logger: quiet))
    let serving = Task { try await group.run() }
    var portIterator = ports.makeAsyncIterator()
    guard let port = await portIterator.next() else { return }

    let url = "http://127.0.0.1:\(port)/v1/accessories/bench/messages"
    let clock = ContinuousClock()
    func postOne() async throws -> Duration {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(post.text)")
        request.body = .bytes(ByteBuffer(bytes: message))
        let start = clock.now
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1024)
        precondition(response.status == .created, "a post was answered \(response.status)")
        return clock.now - start
    }

    print("  relay on loopback, \(message.count)-byte messages, SQLite (synchronous = FULL) in \(directory), \(blocking ? "statements on the shared threads" : "statements on NIO's thread pool"):")
    var sequential: [Duration] = []
    let sequentialStart = clock.now
    for _ in 0..<count { sequential.append(try await postOne()) }
    let sequentialRate = Double(count) / (clock.now - sequentialStart).seconds
    print("    \(count) posts one at a time: \(Int(sequentialRate)) messages/s; a post, wall time with its fsync: \(summary(sequential))")

    // A health check every 2 ms, alone and then beside the posts: how long other requests wait
    // while commits fsync.
    let posting = Mutex(true)
    @Sendable func probe(until: @escaping @Sendable ([Duration]) -> Bool) async throws -> [Duration] {
        var latencies: [Duration] = []
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/health")
        while !until(latencies) {
            let start = clock.now
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1024)
            latencies.append(clock.now - start)
            try await Task.sleep(for: .milliseconds(2))
        }
        return latencies
    }
    print("    200 health checks (GET /v1/health every 2 ms) with nothing else: \(summary(try await probe { $0.count == 200 }))")
    let probing = Task { try await probe { _ in !posting.withLock { $0 } } }
    let concurrentStart = clock.now
    let concurrent = try await withThrowingTaskGroup(of: [Duration].self) { tasks in
        for poster in 0..<posters {
            tasks.addTask {
                var latencies: [Duration] = []
                for _ in stride(from: poster, to: count, by: posters) { latencies.append(try await postOne()) }
                return latencies
            }
        }
        return try await tasks.reduce(into: []) { $0 += $1 }
    }
    let concurrentRate = Double(concurrent.count) / (clock.now - concurrentStart).seconds
    posting.withLock { $0 = false }
    let health = try await probing.value
    print("    \(concurrent.count) posts from \(posters) clients at once: \(Int(concurrentRate)) messages/s; a post: \(summary(concurrent))")
    print("    meanwhile \(health.count) health checks (GET /v1/health every 2 ms): \(summary(health))")

    // Everything now waits for the accessory: its inbox takes it all, acking each.
    let total = count + concurrent.count
    let received = Mutex(0)
    let (done, doneContinuation) = AsyncStream.makeStream(of: Void.self)
    let client = RelayInboxClient(configuration: .init(relay: "ws://127.0.0.1:\(port)", accessoryID: "bench", token: inbox.text), logger: quiet)
    let deliveryStart = clock.now
    let reading = Task {
        await client.run { _, _ in
            if received.withLock({ $0 += 1; return $0 }) == total { doneContinuation.yield() }
        }
    }
    for await _ in done { break }
    let deliveryRate = Double(total) / (clock.now - deliveryStart).seconds
    print("    \(total) messages through the inbox WebSocket, each acked (one fsynced delete per ack): \(Int(deliveryRate)) messages/s")
    reading.cancel()
    await reading.value
    await group.triggerGracefulShutdown()
    try await serving.value
    try store.close()
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
