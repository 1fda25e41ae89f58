import NotifBridgeFuzzing

/// libFuzzer's entry point: APNs payload mapping and service-extension output.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.apns.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

