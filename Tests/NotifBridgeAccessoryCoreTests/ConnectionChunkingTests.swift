import NotifBridgeAccessoryCore
import NotifBridgeCrypto
import NotifBridgeWire
import Testing

@Suite("Accessory connection chunking")
struct ConnectionChunkingTests {
    private func offerChunks(transport: Int, hello: UInt32, newTransport: Int? = nil) throws -> [[UInt8]] {
        let key = try AccessoryPrivateKey.generate(.xWing)
        var connection = AccessoryConnection(
            session: AccessorySession(identity: key, exchange: nil, configuration: .init(allowsP256: true, transports: [.bluetooth])),
            chunkLength: transport, now: .now
        )
        if let newTransport { connection.setTransportChunkLength(newTransport) }
        var message = LinkMessage()
        message.hello = .with {
            $0.protocolVersion = notifBridgeProtocolVersion
            $0.cipherSuites = ["XWing"]
            $0.maxChunkLength = hello
        }
        var framer = ChunkFramer(chunkLength: 4096)
        let actions = framer.frame(WireCodec.encode(message)).flatMap { connection.received(chunk: $0, now: .now) }
        return actions.flatMap { action -> [[UInt8]] in
            if case .send(let transmission) = action { return transmission.chunks }
            return []
        }
    }

    @Test("Chunks towards the host never exceed the transport's length or the host's Hello", arguments: [
        // (ATT payload, Hello.max_chunk_length, MTU change, largest chunk allowed)
        (182, 4096, nil, 182),
        (182, 100, nil, 100),
        (WireLimits.minChunkLength, 4096, nil, WireLimits.minChunkLength),
        (182, 4096, 514, 514),
        (182, 300, 514, 300),
        (514, 4096, 182, 182),
    ] as [(Int, UInt32, Int?, Int)])
    func chunkCap(transport: Int, hello: UInt32, newTransport: Int?, limit: Int) throws {
        let chunks = try offerChunks(transport: transport, hello: hello, newTransport: newTransport)
        #expect(chunks.count > 1, "an X-Wing KeyOffer spans several chunks at these lengths")
        #expect(chunks.allSatisfy { $0.count <= limit })
        #expect(chunks.dropLast().allSatisfy { $0.count == limit }, "every chunk but the last is full")
    }
}
