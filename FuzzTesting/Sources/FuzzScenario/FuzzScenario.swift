import NotifBridgeFuzzing

/// libFuzzer's entry point: scenario YAML.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.scenario.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

