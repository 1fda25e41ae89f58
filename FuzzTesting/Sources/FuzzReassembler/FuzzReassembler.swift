import NotifBridgeFuzzing

/// libFuzzer's entry point: the chunk reassembler.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.reassembler.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

