#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: Resident memory

/// The process's resident set size now (`VmRSS`) and at its peak so far (`VmHWM`), in KiB, read from
/// /proc/self/status (Linux). Elsewhere, `getrusage`'s peak only; `current` is 0.
struct ResidentMemory {
    let current: Int
    let peak: Int

    static func read() -> ResidentMemory {
        #if os(Linux)
            var current = 0
            var peak = 0
            guard let file = fopen("/proc/self/status", "r") else { return ResidentMemory(current: 0, peak: 0) }
            defer { fclose(file) }
            var buffer = [CChar](repeating: 0, count: 256)
            while fgets(&buffer, Int32(buffer.count), file) != nil {
                let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let digits = Int(line.filter(\.isNumber)) ?? 0
                if line.hasPrefix("VmRSS:") { current = digits }
                if line.hasPrefix("VmHWM:") { peak = digits }
            }
            return ResidentMemory(current: current, peak: peak)
        #else
            var usage = rusage()
            getrusage(RUSAGE_SELF, &usage)
            return ResidentMemory(current: 0, peak: Int(usage.ru_maxrss) / 1024)  // bytes on Darwin
        #endif
    }
}

struct MemoryReport {
    let inputs: Int
    let earlyInputs: Int
    let start: ResidentMemory
    let early: ResidentMemory
    let end: ResidentMemory

    /// Growth of the resident set between the early reading and the end, in KiB.
    var growth: Int { end.current - early.current }
    /// Flat: the last 90% of the inputs grew the resident set by less than 1 MiB.
    var isFlat: Bool { growth < 1024 }
}

// MARK: Stack

/// Records the lowest and highest stack addresses seen by `record()`.
final class StackProbe: @unchecked Sendable {
    // Safe: only the chain's thread calls `record()`; the values are read after that thread is joined.
    private(set) var lowest = UInt.max
    private(set) var highest = UInt.min
    private(set) var samples = 0

    @inline(never)
    func record() {
        var marker = 0
        let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        if address < lowest { lowest = address }
        if address > highest { highest = address }
        samples += 1
    }

    var span: Int { samples == 0 ? 0 : Int(highest - lowest) }
}

struct StackReport {
    let steps: Int
    let stackSize: Int
    /// How far apart, in bytes, the deepest and shallowest effect ran over the whole chain.
    let span: Int
    let samples: Int
}

/// Runs `body` on a new thread with a stack of `stackSize` bytes, waits for it, returns its result.
func runOnThread<Result>(stackSize: Int, _ body: @escaping () throws -> Result) throws -> Result {
    var result: Swift.Result<Result, Error>?
    let box = ThreadBody { result = Swift.Result { try body() } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    #if os(Linux)
        var thread = pthread_t()
    #else
        var thread: pthread_t?
    #endif
    let context = Unmanaged.passRetained(box).toOpaque()
    let created = pthread_create(
        &thread, &attributes,
        { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    guard created == 0 else { throw WrongResult(description: "pthread_create failed: \(created)") }
    #if os(Linux)
        pthread_join(thread, nil)
    #else
        pthread_join(thread!, nil)
    #endif
    return try result!.get()
}

/// What `runOnThread` hands to the new thread. Safe: the thread runs `body` once; the caller reads what
/// it wrote only after `pthread_join`.
final class ThreadBody: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
