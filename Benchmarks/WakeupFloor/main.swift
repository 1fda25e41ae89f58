// What this machine charges a thread for going to sleep and waking again: the floor under any
// per-notification CPU figure measured at a given rate. Two ways to wake with no work between:
// a timer (the thread sleeps until a deadline, as a commit window's timer does) and a socket
// (another thread writes one byte; the measured thread is blocked in read(2), as an event loop
// is in epoll). A third column does the same small piece of work after each timer wake-up
// (following a chain through 256 KiB); against the unpaced row, it shows what a pause costs the
// work that follows it, on caches that have gone cold meanwhile. CPU time is the measured
// thread's own (getrusage RUSAGE_THREAD), user + system.
//
//   Benchmarks/floor.sh [--seconds S]
#if canImport(Glibc)
import Foundation
import Glibc
#else
#error("Linux only: RUSAGE_THREAD")
#endif

/// RUSAGE_THREAD, which the Glibc module does not import (it needs _GNU_SOURCE).
let rusageThread = __rusage_who_t(1)

struct Usage {
    var cpuSeconds: Double
    var voluntarySwitches: Int

    static func thread() -> Usage {
        var usage = rusage()
        getrusage(rusageThread, &usage)
        let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return Usage(cpuSeconds: seconds, voluntarySwitches: usage.ru_nvcsw)
    }
}

func monotonicNow() -> timespec {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now
}

/// The deadline `index / rate` seconds after `start`.
func deadline(_ start: timespec, index: Int, rate: Double) -> timespec {
    let offset = Double(index) / rate
    let whole = Int(offset)
    var nanoseconds = start.tv_nsec + Int((offset - Double(whole)) * 1e9)
    var seconds = start.tv_sec + whole
    if nanoseconds >= 1_000_000_000 { nanoseconds -= 1_000_000_000; seconds += 1 }
    return timespec(tv_sec: seconds, tv_nsec: nanoseconds)
}

func sleepUntil(_ due: timespec) {
    var due = due
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
}

struct Measurement {
    var microsecondsPerEvent: Double
    var wakeupsPerEvent: Double
}

/// The thread sleeps until each of `count` deadlines `1/rate` apart (0: does not sleep), and
/// after each wake-up follows `chain` once around (each cache line read names the next, in
/// random order, so no prefetcher can guess it, as with code and data spread over a heap): what
/// work with that much memory pays for starting after a pause, against the same back to back.
func timerWakeups(rate: Double, count: Int, chain: [Int] = []) -> Measurement {
    let start = monotonicNow()
    var sum = 0
    let before = Usage.thread()
    for index in 1...count {
        if rate > 0 { sleepUntil(deadline(start, index: index, rate: rate)) }
        chain.withUnsafeBufferPointer { links in
            guard !links.isEmpty else { return }
            var at = 0
            repeat {
                at = links[at]
                sum &+= at
            } while at != 0
        }
    }
    let after = Usage.thread()
    blackHole(sum)
    return Measurement(
        microsecondsPerEvent: (after.cpuSeconds - before.cpuSeconds) / Double(count) * 1e6,
        wakeupsPerEvent: Double(after.voluntarySwitches - before.voluntarySwitches) / Double(count))
}

/// Keeps the optimiser from dropping a computation whose result is otherwise unused.
@inline(never)
func blackHole(_ value: Int) {
    if value == .min { print(value) }
}

/// Another thread writes `count` single bytes at `rate` (0: as fast as it can); this thread reads
/// them one at a time, blocked in read(2) whenever none is waiting.
func socketWakeups(rate: Double, count: Int) -> Measurement {
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
        fatalError("socketpair: \(String(cString: strerror(errno)))")
    }
    defer { close(pair[0]); close(pair[1]) }
    let writer = pair[0]
    let job = WriterJob(socket: writer, rate: rate, count: count)
    var thread = pthread_t()
    let box = Unmanaged.passRetained(job).toOpaque()
    guard pthread_create(&thread, nil, { WriterJob.run($0!) }, box) == 0 else { fatalError("pthread_create") }
    let before = Usage.thread()
    var byte: UInt8 = 0
    var received = 0
    while received < count, read(pair[1], &byte, 1) == 1 { received += 1 }
    let after = Usage.thread()
    pthread_join(thread, nil)
    return Measurement(
        microsecondsPerEvent: (after.cpuSeconds - before.cpuSeconds) / Double(max(received, 1)) * 1e6,
        wakeupsPerEvent: Double(after.voluntarySwitches - before.voluntarySwitches) / Double(max(received, 1)))
}

final class WriterJob {
    let socket: Int32
    let rate: Double
    let count: Int

    init(socket: Int32, rate: Double, count: Int) {
        self.socket = socket
        self.rate = rate
        self.count = count
    }

    static func run(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        let job = Unmanaged<WriterJob>.fromOpaque(pointer).takeRetainedValue()
        let start = monotonicNow()
        var byte: UInt8 = 1
        for index in 1...job.count {
            if job.rate > 0 { sleepUntil(deadline(start, index: index, rate: job.rate)) }
            guard write(job.socket, &byte, 1) == 1 else { break }
        }
        return nil
    }
}

var seconds = 3.0
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard argument == "--seconds", let value = arguments.popFirst().flatMap(Double.init), value > 0, value <= 600 else {
        fputs("usage: wakeup-floor [--seconds S] (S above 0, at most 600; default 3)\n", stderr)
        exit(2)
    }
    seconds = value
}

func cell(_ measurement: Measurement) -> String {
    String(format: "%.1f µs (%.2f)", measurement.microsecondsPerEvent, measurement.wakeupsPerEvent)
}

/// One link per 64-byte cache line of 256 KiB (a quarter of one core's L2 cache on this project's VM),
/// in one random cycle (seeded: the same order on every run).
let chain: [Int] = {
    let stride = 64 / MemoryLayout<Int>.stride
    let lines = (256 << 10) / 64
    var order = Array(1..<lines)
    var generator = SplitMix64(seed: 0x6e62_666c_6f6f_72)
    order.shuffle(using: &generator)
    var links = [Int](repeating: 0, count: lines * stride)
    var from = 0
    for line in order {
        links[from * stride] = line * stride
        from = line
    }
    links[from * stride] = 0
    return links
}()

/// A small seeded generator, so that the chain's order is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        return mixed ^ (mixed >> 31)
    }
}

print("CPU time of the waking thread per event (wake-ups per event), \(seconds) s at each rate")
print("| rate | timer | socket | timer, then 256 KiB in random order |")
print("| --- | --- | --- | --- |")
for rate in [100.0, 500, 1_500, 3_000, 6_000] {
    let count = max(1, Int(rate * seconds))
    print("| \(Int(rate))/s | \(cell(timerWakeups(rate: rate, count: count))) | \(cell(socketWakeups(rate: rate, count: count))) "
        + "| \(cell(timerWakeups(rate: rate, count: count, chain: chain))) |")
}
print("| unpaced | | \(cell(socketWakeups(rate: 0, count: Int(200_000 * seconds)))) "
    + "| \(cell(timerWakeups(rate: 0, count: Int(10_000 * seconds), chain: chain))) |")
