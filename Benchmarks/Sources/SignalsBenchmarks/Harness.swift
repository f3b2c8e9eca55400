import AllocationCounter

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Settings for one run of the suite.
struct Options {
    var quick = false
    /// Only workloads whose name contains one of these (case-insensitive) run; empty means all.
    var filters: [String] = []
    /// For profiling: only workloads whose full name contains this run; the others are skipped and
    /// show "-" in the table.
    var only: String?
    /// Overrides the number of timed repetitions (for profiling).
    var repetitionsOverride: Int?
    /// Overrides the divisor of every full-size count (for profiling).
    var scaleOverride: Int?
    var repetitions: Int { repetitionsOverride ?? (quick ? 3 : 5) }
    /// Divides every full-size count: 10 in quick mode.
    var scale: Int { scaleOverride ?? (quick ? 10 : 1) }

    /// A full-size count divided by `scale`, kept a multiple of 4 (the login cycle's length).
    func count(_ full: Int) -> Int { Swift.max(4, full / scale / 4 * 4) }

    /// Whether `--only` selects the workload `name`: its full name contains the text, or, for a text
    /// ending in `$`, is exactly the text before it.
    func onlyMatches(_ name: String) -> Bool {
        guard let only else { return true }
        if only.hasSuffix("$") { return name.lowercased() == only.dropLast().lowercased() }
        return name.lowercased().contains(only.lowercased())
    }

    func selects(_ name: String) -> Bool {
        filters.isEmpty || filters.contains { name.lowercased().contains($0.lowercased()) }
    }
}

/// A workload's result did not match what it must be: the run fails.
struct WrongResult: Error, CustomStringConvertible {
    let description: String
}

/// Fails the run unless `actual == expected`.
func check<T: Equatable>(_ actual: T, _ expected: T, _ what: @autoclosure () -> String) throws {
    if actual != expected {
        throw WrongResult(description: "\(what()): got \(actual), expected \(expected)")
    }
}

/// Hides a value from the optimizer, so a count or a closure is not constant-folded away.
@inline(never)
func opaque<T>(_ value: T) -> T { value }

/// One measured workload. `prepare` builds a fresh instance outside the timed region and returns the
/// timed body. Each call of the body performs `events` events on that instance and checks its own
/// result (counted relative to the start of that call, so a body may run more than once); it throws
/// `WrongResult` if the result is wrong.
struct Workload {
    let name: String
    let events: Int
    let prepare: () throws -> () throws -> Void
}

struct Measurement {
    let name: String
    let events: Int
    let nanosecondsPerEvent: [Double]
    /// Heap allocations per event on a warm instance, or nil if not measured.
    let allocationsPerEvent: Double?

    var median: Double {
        guard !nanosecondsPerEvent.isEmpty else { return .nan }
        let sorted = nanosecondsPerEvent.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var min: Double { nanosecondsPerEvent.min() ?? .nan }
    var max: Double { nanosecondsPerEvent.max() ?? .nan }
}

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Runs one warm-up and `options.repetitions` timed repetitions, each on a fresh instance, then counts
/// allocations per event (see `allocationsPerEvent`) on `allocationWorkload` (by default the same
/// workload; a smaller one where running the full one twice more would take too long), unless
/// `countAllocations` is false.
func measure(
    _ workload: Workload, options: Options, countAllocations: Bool = true,
    allocationWorkload: Workload? = nil
) throws -> Measurement {
    if !options.onlyMatches(workload.name) {
        return Measurement(
            name: workload.name, events: workload.events, nanosecondsPerEvent: [],
            allocationsPerEvent: nil)
    }
    let clock = ContinuousClock()
    var samples: [Double] = []
    for repetition in 0...options.repetitions {
        let body = try workload.prepare()
        let elapsed = try clock.measure { try body() }
        if repetition > 0 {  // repetition 0 is the warm-up
            samples.append(elapsed.nanoseconds / Double(workload.events))
        }
    }
    let allocations = countAllocations ? try allocationsPerEvent(allocationWorkload ?? workload) : nil
    let measurement = Measurement(
        name: workload.name, events: workload.events, nanosecondsPerEvent: samples,
        allocationsPerEvent: allocations)
    report(measurement)
    return measurement
}

/// Measures `workloads` side by side, for ratios between them: one warm-up of each, then
/// `options.repetitions` rounds in which each runs once, in turn, on a fresh instance. A machine whose
/// speed drifts (this one's moves by up to 1.8× from one minute to the next) then slows every workload
/// of a round alike, and the medians compare runs made seconds apart, not minutes. Allocations are
/// counted after the timed rounds, as in `measure`, on `allocationWorkloads[i]` if given.
func measureSideBySide(
    _ workloads: [Workload], options: Options, allocationWorkloads: [Workload]? = nil
) throws -> [Measurement] {
    let clock = ContinuousClock()
    let selected = workloads.map { options.onlyMatches($0.name) }
    var samples = Array(repeating: [Double](), count: workloads.count)
    for repetition in 0...options.repetitions {
        for index in workloads.indices where selected[index] {
            let body = try workloads[index].prepare()
            let elapsed = try clock.measure { try body() }
            if repetition > 0 {  // round 0 is the warm-up
                samples[index].append(elapsed.nanoseconds / Double(workloads[index].events))
            }
        }
    }
    return try workloads.indices.map { index in
        let workload = workloads[index]
        guard selected[index] else {
            return Measurement(
                name: workload.name, events: workload.events, nanosecondsPerEvent: [], allocationsPerEvent: nil)
        }
        let measurement = Measurement(
            name: workload.name, events: workload.events, nanosecondsPerEvent: samples[index],
            allocationsPerEvent: try allocationsPerEvent(allocationWorkloads?[index] ?? workload))
        report(measurement)
        return measurement
    }
}

/// Heap allocations per event once warm: a fresh instance's body runs once uncounted (so queue storage
/// and caches have grown), then once more under the allocation counter. nil where the counter is not
/// available.
func allocationsPerEvent(_ workload: Workload) throws -> Double? {
    guard allocation_counter_is_available() != 0 else { return nil }
    let body = try workload.prepare()
    try body()
    allocation_counter_start()
    let before = allocation_counter_allocations()
    try body()
    let after = allocation_counter_allocations()
    allocation_counter_stop()
    return Double(after - before) / Double(workload.events)
}

/// Prints one line as soon as a workload is done, so a long run shows progress.
func report(_ measurement: Measurement) {
    var line = "  \(pad(measurement.name, 34)) \(pad(format(measurement.median), 10, right: true)) ns/event"
    line += "  (min \(format(measurement.min)), max \(format(measurement.max)))"
    if let allocations = measurement.allocationsPerEvent {
        line += "  allocs/event \(format(allocations))"
    }
    print(line)
    fflush(nil)  // flush every output stream, so progress shows through a pipe
}

func format(_ value: Double) -> String {
    guard value.isFinite else { return "-" }
    if value >= 100 { return String(Int(value.rounded())) }
    if value >= 10 { return String(Double(Int((value * 10).rounded())) / 10) }
    return String(Double(Int((value * 100).rounded())) / 100)
}

/// Formats a count with thousands separators: 10,000,000.
func grouped(_ value: Int) -> String {
    let digits = Array(String(value))
    var result = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return result
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let padding = String(repeating: " ", count: Swift.max(0, width - text.count))
    return right ? padding + text : text + padding
}
