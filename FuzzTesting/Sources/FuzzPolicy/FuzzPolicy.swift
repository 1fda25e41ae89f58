import NotifBridgeFuzzing

/// libFuzzer's entry point: policy files.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.policy.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

