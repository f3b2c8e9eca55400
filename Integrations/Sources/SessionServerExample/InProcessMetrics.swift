import CoreMetrics
import Foundation

/// A `MetricsFactory` that keeps every metric in the process, for the summary: counters' totals,
/// meters' current and peak values, timers' every value. Metrics of the same label and dimensions
/// share one handler, as most backends do. Thread safe.
final class InProcessMetrics: MetricsFactory, @unchecked Sendable {
    // Safe: the dictionaries are only touched with `lock` held.
    private let lock = NSLock()
    private var counters: [String: InProcessCounter] = [:]
    private var meters: [String: InProcessMeter] = [:]
    private var timers: [String: InProcessTimer] = [:]
    private var recorders: [String: InProcessRecorder] = [:]

    /// `label` and `dimensions` as one name, e.g. `session.replies{outcome=success}`.
    static func name(_ label: String, _ dimensions: [(String, String)]) -> String {
        dimensions.isEmpty ? label : label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> CounterHandler {
        lock.withLock { made(&counters, Self.name(label, dimensions), InProcessCounter()) }
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> MeterHandler {
        lock.withLock { made(&meters, Self.name(label, dimensions), InProcessMeter()) }
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> RecorderHandler {
        lock.withLock { made(&recorders, Self.name(label, dimensions), InProcessRecorder()) }
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> TimerHandler {
        lock.withLock { made(&timers, Self.name(label, dimensions), InProcessTimer()) }
    }

    // Metrics stay until the end of the program, for the summary.
    func destroyCounter(_ handler: CounterHandler) {}
    func destroyMeter(_ handler: MeterHandler) {}
    func destroyRecorder(_ handler: RecorderHandler) {}
    func destroyTimer(_ handler: TimerHandler) {}

    /// Every counter's total, by name.
    var counterTotals: [String: Int64] {
        lock.withLock { counters.mapValues(\.total) }
    }

    /// A meter's current and peak values.
    func meter(_ label: String, _ dimensions: [(String, String)] = []) -> (value: Double, peak: Double)? {
        lock.withLock { meters[Self.name(label, dimensions)]?.snapshot }
    }

    /// A timer's values, in nanoseconds.
    func timerValues(_ label: String, _ dimensions: [(String, String)] = []) -> [Int64] {
        lock.withLock { timers[Self.name(label, dimensions)]?.values ?? [] }
    }

    private func made<Handler>(_ handlers: inout [String: Handler], _ name: String, _ make: @autoclosure () -> Handler)
        -> Handler
    {
        if let handler = handlers[name] { return handler }
        let handler = make()
        handlers[name] = handler
        return handler
    }
}

final class InProcessCounter: CounterHandler, @unchecked Sendable {
    // Safe: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Int64 = 0

    func increment(by amount: Int64) { lock.withLock { value += amount } }
    func reset() { lock.withLock { value = 0 } }
    var total: Int64 { lock.withLock { value } }
}

final class InProcessMeter: MeterHandler, @unchecked Sendable {
    // Safe: `value` and `peak` are only touched with `lock` held.
    private let lock = NSLock()
    private var value: Double = 0
    private var peak: Double = 0

    func set(_ value: Int64) { set(Double(value)) }
    func set(_ value: Double) { update { $0 = value } }
    func increment(by amount: Double) { update { $0 += amount } }
    func decrement(by amount: Double) { update { $0 -= amount } }
    var snapshot: (value: Double, peak: Double) { lock.withLock { (value, peak) } }

    private func update(_ change: (inout Double) -> Void) {
        lock.withLock {
            change(&value)
            peak = max(peak, value)
        }
    }
}

final class InProcessTimer: TimerHandler, @unchecked Sendable {
    // Safe: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [Int64] = []

    func recordNanoseconds(_ duration: Int64) { lock.withLock { recorded.append(duration) } }
    var values: [Int64] { lock.withLock { recorded } }
}

final class InProcessRecorder: RecorderHandler, @unchecked Sendable {
    // Safe: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [Double] = []

    func record(_ value: Int64) { record(Double(value)) }
    func record(_ value: Double) { lock.withLock { recorded.append(value) } }
}
