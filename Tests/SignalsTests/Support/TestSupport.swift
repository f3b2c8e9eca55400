import Dispatch
import Foundation
import Signals
import Testing

// Shared helpers for the Signals core tests. Names are deliberately specific, because other test
// files of this target are written in parallel.

/// The error type the tests send.
enum TestError: Error, Equatable, Hashable {
    case boom
    case other
}

/// A value guarded by a lock, for collecting results from observers that may run on any thread.
final class LockedTestValue<Value>: @unchecked Sendable {
    // Safe: `storage` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var storage: Value

    init(_ value: Value) {
        storage = value
    }

    /// A copy of the current value.
    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    /// Runs `body` on the value with the lock held. `body` must not block on other threads.
    @discardableResult
    func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }
}

/// A list appended to from any thread (hook orders, log lines, what scheduled actions saw).
final class TestLog<Entry: Sendable>: Sendable {
    private let storage = LockedTestValue<[Entry]>([])

    init() {}

    func append(_ entry: Entry) {
        storage.withValue { $0.append(entry) }
    }

    /// Everything appended so far, in order.
    var entries: [Entry] { storage.value }
}

/// Records every event it is given, in order, from any thread.
final class EventRecorder<Value: Sendable, Error: Swift.Error>: Sendable {
    private let recorded = LockedTestValue<[Event<Value, Error>]>([])
    private let terminated = DispatchSemaphore(value: 0)

    init() {}

    /// Every event recorded so far, in the order they arrived.
    var events: [Event<Value, Error>] { recorded.value }

    /// The values among the recorded events, in order.
    var values: [Value] { recorded.value.compactMap(\.value) }

    /// How many terminal events were recorded (a well-behaved stream gives at most one).
    var terminalCount: Int { recorded.value.filter(\.isTerminating).count }

    /// Whether the recorded events follow `value* (failed | completed | interrupted)?`.
    var followsGrammar: Bool {
        let events = recorded.value
        guard let firstTerminal = events.firstIndex(where: \.isTerminating) else { return true }
        return firstTerminal == events.count - 1
    }

    func record(_ event: Event<Value, Error>) {
        recorded.withValue { $0.append(event) }
        if event.isTerminating { terminated.signal() }
    }

    /// Waits for a terminal event, at most `seconds`, blocking the calling thread; false if none came.
    func waitForTermination(seconds: Double = 300) -> Bool {
        terminated.wait(timeout: .now() + seconds) == .success
    }

    /// Waits for a terminal event on a thread of its own, so that no thread of Swift's concurrency
    /// pool is blocked while the tasks under test need it; false after `seconds`.
    func terminated(within seconds: Double = 300) async -> Bool {
        await Watchdog.signalled(terminated, within: seconds)
    }

    /// An observer that records into this recorder.
    var observer: Observer<Value, Error> {
        Observer { [self] event in self.record(event) }
    }
}

/// A weak reference, to check that something was freed.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    // Safe: Swift's weak references are loaded and stored atomically; tests write it from one thread
    // before reading it from another only across a synchronisation point (a lock or a thread join).
    weak var object: Object?

    init(_ object: Object? = nil) {
        self.object = object
    }
}

/// Tracks how many callers are inside a region at once (or how deeply one thread is nested in it), and
/// the highest that number ever reached.
final class InFlightProbe: Sendable {
    private struct Counts {
        var current = 0
        var maximum = 0
    }

    private let counts = LockedTestValue(Counts())

    init() {}

    /// The highest number of callers that were inside at the same time.
    var maximum: Int { counts.value.maximum }

    /// Runs `body` as one caller inside the region.
    func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        counts.withValue { counts in
            counts.current += 1
            counts.maximum = max(counts.maximum, counts.current)
        }
        defer { counts.withValue { $0.current -= 1 } }
        return try body()
    }
}

/// Waits that fail the test instead of hanging it, and real threads for concurrency tests.
enum Watchdog {
    /// How long any single wait in these tests may take before it counts as a hang.
    static let defaultTimeout: DispatchTimeInterval = .seconds(300)

    /// Waits for `semaphore` on a thread of its own, so that neither Swift's concurrency pool nor
    /// Dispatch's worker threads (both only as wide as the machine) are blocked while the tasks under
    /// test need them; false if it was not signalled within `seconds`. A guard against hangs, not a
    /// measurement, so it is generous: in the parallel debug run, synchronous tests hold both of the
    /// pool's threads for tens of seconds on a 2-core machine, and a task a test starts waits for them
    /// (CI once saw five async-bridge tests time out at 60 s that way on a loaded machine).
    static func signalled(_ semaphore: DispatchSemaphore, within seconds: Double = 300) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
            }
        }
    }

    /// Waits for `semaphore`; records an issue and returns false if it is not signalled in time.
    @discardableResult
    static func wait(
        _ semaphore: DispatchSemaphore,
        timeout: DispatchTimeInterval = defaultTimeout,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let result = semaphore.wait(timeout: .now() + timeout)
        if result == .timedOut {
            Issue.record("Timed out waiting for \(what)", sourceLocation: sourceLocation)
            return false
        }
        return true
    }

    /// Waits for `group`; records an issue and returns false if it does not finish in time.
    @discardableResult
    static func wait(
        _ group: DispatchGroup,
        timeout: DispatchTimeInterval = defaultTimeout,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        if group.wait(timeout: .now() + timeout) == .timedOut {
            Issue.record("Timed out waiting for \(what)", sourceLocation: sourceLocation)
            return false
        }
        return true
    }

    /// Runs `body(index)` on `count` new threads that all start together, and waits for them all.
    ///
    /// Real `Thread`s are used rather than a dispatch pool, so a thread that blocks cannot stop another
    /// from running. Records an issue (and returns false) instead of hanging if they do not finish.
    @discardableResult
    static func runOnThreads(
        _ count: Int,
        timeout: DispatchTimeInterval = defaultTimeout,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable (_ index: Int) -> Void
    ) -> Bool {
        let group = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for index in 0..<count {
            group.enter()
            // The thread takes its body, so that what the body captured is released when it returns,
            // before `group.leave()`: a `Thread` keeps its block until the thread exits, after that.
            let slot = LockedTestValue<(@Sendable (Int) -> Void)?>(body)
            let thread = Thread {
                go.wait()
                do {
                    let taken = slot.withValue { held in
                        defer { held = nil }; return held
                    }
                    taken?(index)
                }
                group.leave()
            }
            thread.start()
        }
        for _ in 0..<count { go.signal() }
        return wait(group, timeout: timeout, "\(count) threads to finish", sourceLocation: sourceLocation)
    }

    /// Starts `body` on one new thread and returns at once.
    static func startThread(_ body: @escaping @Sendable () -> Void) {
        Thread(block: body).start()
    }

    /// An identifier of the calling thread, to tell which thread ran an observer. (`Thread.name` is not
    /// reliable for this on Linux.)
    static var currentThreadID: UInt {
        #if canImport(Darwin)
            return UInt(bitPattern: pthread_self())
        #else
            return UInt(pthread_self())
        #endif
    }
}
