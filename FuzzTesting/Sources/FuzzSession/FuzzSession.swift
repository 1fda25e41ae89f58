import NotifBridgeFuzzing

/// libFuzzer's entry point: LinkMessages driving the accessory's connection state machine.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.session.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

