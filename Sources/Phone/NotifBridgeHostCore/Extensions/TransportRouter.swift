import Foundation

/// `AccessoryTransport`, in the order the system tries them for each message.
public enum AccessoryTransport: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case bluetooth, localNetwork, internet

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .bluetooth: "bluetooth"
        case .localNetwork: "local network"
        case .internet: "internet"
        }
    }
}

/// The system's side of choosing a transport for each message to the accessory
/// (reference/apple-api.md §5.1, §5.2, §8), with no IO: events in, actions out.
///
/// Each message tries Bluetooth if connected, then the local network, then the internet, each if
/// available and supported; the local network and the internet only with X-Wing. A transport
/// that answers `.transportUnavailable` is skipped for that message and the next one is tried;
/// `.transportFailed` retries the same one, after a growing delay, `maxRetries` times before it
/// counts as unavailable for that message. When every transport that is up has been tried, the
/// message starts over after `maxRetryDelay` (waiting for a link to change could wait forever
/// on a link that stays up); with none up, it is held until one becomes available. One message
/// is in flight at a time, in the order submitted, so none is sent twice at once and none
/// overtakes another.
public struct TransportRouter: Sendable {
    public struct Configuration: Sendable {
        public var supported: Set<AccessoryTransport>
        /// The exchange's suite as the platform names it: "XWing" or "P256".
        public var cipherSuite: String
        public var maxRetries: Int
        public var firstRetryDelay: Duration
        public var maxRetryDelay: Duration

        public init(
            supported: Set<AccessoryTransport> = Set(AccessoryTransport.allCases), cipherSuite: String = "XWing",
            maxRetries: Int = 3, firstRetryDelay: Duration = .milliseconds(200), maxRetryDelay: Duration = .seconds(5)
        ) {
            self.supported = supported
            self.cipherSuite = cipherSuite
            self.maxRetries = maxRetries
            self.firstRetryDelay = firstRetryDelay
            self.maxRetryDelay = maxRetryDelay
        }
    }

    public enum Event: Sendable {
        case submitted(UInt64)
        case available(AccessoryTransport)
        case unavailable(AccessoryTransport)
        /// The transport extension's completion for the message's current attempt.
        case completed(UInt64, AccessoryMessageResult)
    }

    public enum Action: Sendable, Hashable {
        /// Hand the message to this transport, after `delay` (zero but for retries).
        case send(UInt64, via: AccessoryTransport, delay: Duration)
        case delivered(UInt64, via: AccessoryTransport)
        /// No transport can take it now; it goes when one becomes available.
        case held(UInt64)
    }

    private struct Pending {
        var id: UInt64
        var skipped: Set<AccessoryTransport> = []
        var failures = 0
        var inFlight: AccessoryTransport?
        var held = false
    }

    public let configuration: Configuration
    public private(set) var available: Set<AccessoryTransport> = []
    private var queue: [Pending] = []
    private var head = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Messages submitted and not yet delivered.
    public var pendingCount: Int { queue.count - head }

    /// Whether the system may use `transport` for this accessory at all.
    public func permits(_ transport: AccessoryTransport) -> Bool {
        configuration.supported.contains(transport) && (transport == .bluetooth || configuration.cipherSuite == "XWing")
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .submitted(let id):
            queue.append(Pending(id: id))
            return pendingCount == 1 ? dispatch() : []
        case .available(let transport):
            available.insert(transport)
            guard head < queue.count else { return [] }
            queue[head].skipped.remove(transport)
            return queue[head].inFlight == nil ? dispatch() : []
        case .unavailable(let transport):
            available.remove(transport)
            return []
        case .completed(let id, let result):
            guard head < queue.count, queue[head].id == id, let transport = queue[head].inFlight else { return [] }
            queue[head].inFlight = nil
            switch result {
            case .success:
                head += 1
                compact()
                return [.delivered(id, via: transport)] + dispatch()
            case .failure(.transportUnavailable):
                queue[head].skipped.insert(transport)
                queue[head].failures = 0
                return dispatch()
            case .failure(.transportFailed):
                queue[head].failures += 1
                guard queue[head].failures <= configuration.maxRetries else {
                    queue[head].skipped.insert(transport)
                    queue[head].failures = 0
                    return dispatch()
                }
                queue[head].inFlight = transport
                return [.send(id, via: transport, delay: retryDelay(queue[head].failures))]
            }
        }
    }

    /// Sends the first message on the first transport it may still try, or holds it.
    private mutating func dispatch() -> [Action] {
        guard head < queue.count, queue[head].inFlight == nil else { return [] }
        let usable = AccessoryTransport.allCases.filter { permits($0) && available.contains($0) }
        var delay = Duration.zero
        var candidates = usable.filter { !queue[head].skipped.contains($0) }
        if candidates.isEmpty, !usable.isEmpty {
            queue[head].skipped = []
            queue[head].failures = 0
            candidates = usable
            delay = configuration.maxRetryDelay
        }
        guard let transport = candidates.first else {
            guard !queue[head].held else { return [] }
            queue[head].held = true
            return [.held(queue[head].id)]
        }
        queue[head].inFlight = transport
        queue[head].held = false
        return [.send(queue[head].id, via: transport, delay: delay)]
    }

    private func retryDelay(_ failures: Int) -> Duration {
        let doubled = configuration.firstRetryDelay * (1 << min(failures - 1, 16))
        return min(doubled, configuration.maxRetryDelay)
    }

    private mutating func compact() {
        if head > 64, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}
