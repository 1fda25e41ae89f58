import NotifBridgeFuzzing

/// libFuzzer's entry point: the TCP link's stream decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.streamDecoder.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

