import NotifBridgeFuzzing

/// libFuzzer's entry point: HostEvent validation and the store's ledger.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.ledger.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

