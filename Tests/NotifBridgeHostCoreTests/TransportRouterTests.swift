import Foundation
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

/// The system's transport choice: Apple's order, fall-through on `.transportUnavailable`,
/// bounded retries on `.transportFailed`, holding, and a walk in and out of range.
@Suite("Transport router")
struct TransportRouterTests {
    typealias Router = TransportRouter

    @Test("The first transport tried, by what is supported, available and the suite", arguments: [
        (supported: "bluetooth localNetwork internet", available: "bluetooth localNetwork internet", suite: "XWing", first: "bluetooth"),
        ("bluetooth localNetwork internet", "localNetwork internet", "XWing", "local network"),
        ("bluetooth localNetwork internet", "internet", "XWing", "internet"),
        ("bluetooth internet", "localNetwork internet", "XWing", "internet"),
        ("bluetooth localNetwork internet", "localNetwork internet", "P256", "held"),
        ("bluetooth localNetwork internet", "bluetooth internet", "P256", "bluetooth"),
        ("localNetwork", "bluetooth localNetwork", "XWing", "local network"),
        ("bluetooth localNetwork internet", "", "XWing", "held"),
    ])
    func firstChoice(supported: String, available: String, suite: String, first: String) {
        func set(_ names: String) -> Set<AccessoryTransport> {
            Set(names.split(separator: " ").map { name in AccessoryTransport.allCases.first { "\($0)".replacingOccurrences(of: " ", with: "") == name.lowercased() }! })
        }
        var router = Router(configuration: .init(supported: set(supported), cipherSuite: suite))
        for transport in set(available) { _ = router.handle(.available(transport)) }
        let actions = router.handle(.submitted(1))
        switch actions.first {
        case .send(1, let via, .zero): #expect("\(via)" == first)
        case .held(1): #expect(first == "held")
        default: Issue.record("unexpected \(actions)")
        }
    }

    @Test("Unavailable falls through Bluetooth → local network → internet, then starts over after the longest delay")
    func fallThrough() {
        var router = Router()
        for transport in AccessoryTransport.allCases { _ = router.handle(.available(transport)) }
        #expect(router.handle(.submitted(7)) == [.send(7, via: .bluetooth, delay: .zero)])
        #expect(router.handle(.completed(7, .failure(.transportUnavailable))) == [.send(7, via: .localNetwork, delay: .zero)])
        #expect(router.handle(.completed(7, .failure(.transportUnavailable))) == [.send(7, via: .internet, delay: .zero)])
        #expect(router.handle(.completed(7, .failure(.transportUnavailable))) == [.send(7, via: .bluetooth, delay: Router.Configuration().maxRetryDelay)])
        #expect(router.handle(.completed(7, .success(()))) == [.delivered(7, via: .bluetooth)])
    }

    @Test("With no transport up the message is held, and goes when one comes back")
    func holdsUntilOneReturns() {
        var router = Router()
        _ = router.handle(.available(.bluetooth))
        #expect(router.handle(.submitted(7)) == [.send(7, via: .bluetooth, delay: .zero)])
        #expect(router.handle(.unavailable(.bluetooth)) == [])
        #expect(router.handle(.completed(7, .failure(.transportUnavailable))) == [.held(7)])
        #expect(router.handle(.submitted(8)) == [])
        #expect(router.handle(.available(.bluetooth)) == [.send(7, via: .bluetooth, delay: .zero)])
        #expect(router.handle(.completed(7, .success(()))) == [.delivered(7, via: .bluetooth), .send(8, via: .bluetooth, delay: .zero)])
        #expect(router.handle(.completed(7, .success(()))) == [], "a late completion for a delivered message")
        #expect(router.pendingCount == 1)
    }

    /// A link that stays up but keeps failing never reports a change: holding would stop every
    /// later message for good.
    @Test("Retries used up on the only transport that is up: a new round later, not a hold behind which everything waits")
    func noHoldWhileATransportIsUp() {
        var router = Router(configuration: .init(maxRetries: 3, firstRetryDelay: .milliseconds(100), maxRetryDelay: .seconds(5)))
        _ = router.handle(.available(.bluetooth))
        #expect(router.handle(.submitted(1)) == [.send(1, via: .bluetooth, delay: .zero)])
        for _ in 0..<3 { _ = router.handle(.completed(1, .failure(.transportFailed))) }
        #expect(router.handle(.completed(1, .failure(.transportFailed))) == [.send(1, via: .bluetooth, delay: .seconds(5))])
        #expect(router.handle(.submitted(2)) == [])
        #expect(router.handle(.completed(1, .failure(.transportFailed))) == [.send(1, via: .bluetooth, delay: .milliseconds(100))], "the new round retries afresh")
        #expect(router.handle(.completed(1, .success(()))) == [.delivered(1, via: .bluetooth), .send(2, via: .bluetooth, delay: .zero)])
    }

    /// Boundary pair on `maxRetries`: the last retry stays on the transport, one more failure
    /// moves on.
    @Test("transportFailed retries the same transport maxRetries times with growing delays, then moves on")
    func retries() {
        var router = Router(configuration: .init(maxRetries: 2, firstRetryDelay: .milliseconds(100), maxRetryDelay: .milliseconds(150)))
        _ = router.handle(.available(.bluetooth))
        _ = router.handle(.available(.internet))
        #expect(router.handle(.submitted(1)) == [.send(1, via: .bluetooth, delay: .zero)])
        #expect(router.handle(.completed(1, .failure(.transportFailed))) == [.send(1, via: .bluetooth, delay: .milliseconds(100))])
        #expect(router.handle(.completed(1, .failure(.transportFailed))) == [.send(1, via: .bluetooth, delay: .milliseconds(150))])
        #expect(router.handle(.completed(1, .failure(.transportFailed))) == [.send(1, via: .internet, delay: .zero)])
        #expect(router.handle(.completed(1, .success(()))) == [.delivered(1, via: .internet)])
    }

    /// Walks out of Bluetooth range onto the local network, onto the internet and back, at
    /// random (seeded): each message is delivered exactly once, in order, never on a transport
    /// the suite forbids, and nothing is left once Bluetooth is back.
    @Test("Walking in and out of range loses, repeats and reorders nothing", arguments: [(suite: "XWing", seed: UInt64(11)), ("P256", 12), ("XWing", 13)])
    func walk(suite: String, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var router = Router(configuration: .init(cipherSuite: suite, maxRetries: 2))
        var reachable: Set<AccessoryTransport> = [.bluetooth]
        var delivered: [UInt64] = []
        var viaCount: [AccessoryTransport: Int] = [:]
        var inFlight: (UInt64, AccessoryTransport)?
        var next: UInt64 = 1

        func run(_ actions: [Router.Action]) {
            for action in actions {
                switch action {
                case .send(let id, let via, _):
                    #expect(inFlight == nil, "two messages in flight")
                    #expect(via == .bluetooth || suite == "XWing", "\(via) with \(suite)")
                    inFlight = (id, via)
                case .delivered(let id, let via):
                    delivered.append(id)
                    viaCount[via, default: 0] += 1
                case .held:
                    break
                }
            }
        }
        _ = router.handle(.available(.bluetooth))
        for _ in 0..<2_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                run(router.handle(.submitted(next)))
                next += 1
            case 3...4:
                // Out of or back into range of one transport, as its link reports it.
                let transport = AccessoryTransport.allCases.randomElement(using: &random)!
                if reachable.contains(transport) {
                    reachable.remove(transport)
                    run(router.handle(.unavailable(transport)))
                } else {
                    reachable.insert(transport)
                    run(router.handle(.available(transport)))
                }
            default:
                guard let (id, via) = inFlight else { continue }
                inFlight = nil
                let result: AccessoryMessageResult =
                    !reachable.contains(via) ? .failure(.transportUnavailable)
                    : Int.random(in: 0..<8, using: &random) == 0 ? .failure(.transportFailed) : .success(())
                run(router.handle(.completed(id, result)))
            }
        }
        // Back in Bluetooth range: everything goes.
        reachable.insert(.bluetooth)
        run(router.handle(.available(.bluetooth)))
        while let (id, _) = inFlight {
            inFlight = nil
            run(router.handle(.completed(id, .success(()))))
        }
        #expect(delivered == Array(1..<next))
        #expect(router.pendingCount == 0)
        if suite == "XWing" {
            #expect(viaCount[.localNetwork, default: 0] > 0 && viaCount[.internet, default: 0] > 0, "\(viaCount)")
        } else {
            #expect(viaCount.keys.allSatisfy { $0 == .bluetooth })
        }
    }
}
