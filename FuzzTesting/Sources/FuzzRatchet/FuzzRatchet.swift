import NotifBridgeFuzzing

/// libFuzzer's entry point: the internet ratchet's receiver.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.ratchet.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
