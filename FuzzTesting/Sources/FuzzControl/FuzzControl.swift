import NotifBridgeFuzzing

/// libFuzzer's entry point: the control socket's lines and requests.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.control.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

