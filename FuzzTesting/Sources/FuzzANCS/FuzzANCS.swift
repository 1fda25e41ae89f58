import NotifBridgeFuzzing

/// libFuzzer's entry point: the ANCS client.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.ancs.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
