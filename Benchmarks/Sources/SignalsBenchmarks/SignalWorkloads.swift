import OpenCombine
import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running total that observers add to. Safe: each workload drives it from one thread only (the one
/// that sends), and reads it on that thread after the sends.
///
/// The value lives behind a pointer rather than in a stored `var`: a class's stored `var` gets a
/// dynamic exclusivity check (`swift_beginAccess`, about 15 ns here) on every access, which would
/// dwarf what the observers are meant to measure, in the baselines and the libraries alike.
final class Total: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Int>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: 0)
    }

    deinit { storage.deallocate() }

    var value: Int {
        @inline(__always) get { storage.pointee }
        @inline(__always) set { storage.pointee = newValue }
    }
}

/// The sum of 0..<count, what each observer must have added up.
func sumBelow(_ count: Int) -> Int { count * (count - 1) / 2 }

// MARK: W1 / W1x10 with Signals

/// W1 (`observers == 1`) and W1x10 (`observers == 10`): one `Signal.pipe()`, observers that add every
/// value to a total, `count` sends of 0..<count.
func signalWorkload(name: String, observers: Int, count: Int) -> Workload {
    Workload(name: name, events: count) {
        let (signal, input) = Signal<Int, Never>.pipe()
        let totals = (0..<observers).map { _ in Total() }
        for total in totals {
            signal.observeValues { total.value &+= $0 }
        }
        let count = opaque(count)
        return {
            let before = totals.map(\.value)
            for value in 0..<count {
                input.send(value: value)
            }
            for (index, total) in totals.enumerated() {
                try check(total.value - before[index], sumBelow(count), "\(name) observer \(index) total")
            }
            withExtendedLifetime(signal) {}
        }
    }
}

// MARK: W1 hand-written baselines

/// The least a thread-safe hot subject must do: take a lock to read the observer list, release it,
/// call each observer closure. (The library's rule: no user closure runs under a lock.) The lock is the
/// baselines' futex lock (`Mutex`), as cheap as the library's.
final class HandWrittenSubject: @unchecked Sendable {
    // Safe: `observers` is only read or written with `mutex` held (so its exclusivity checks are left
    // out, as an expert leaves them out).
    private let mutex = Mutex()
    @exclusivity(unchecked) private var observers: ContiguousArray<(Int) -> Void> = []

    @inline(never)
    func observe(_ observer: @escaping (Int) -> Void) {
        mutex.lock()
        observers.append(observer)
        mutex.unlock()
    }

    @inline(__always)
    func send(_ value: Int) {
        mutex.lock()
        let current = observers
        mutex.unlock()
        for observer in current {
            observer(value)
        }
    }
}

/// Builds an observer closure the optimizer cannot see into from the sending loop.
@inline(never)
func makeAdder(_ total: Total) -> (Int) -> Void {
    { total.value &+= $0 }
}

/// W1 baseline, locked: `HandWrittenSubject` (lock, copy the closure array, unlock, call each).
func handWrittenLockedWorkload(name: String, observers: Int, count: Int) -> Workload {
    Workload(name: name, events: count) {
        let subject = HandWrittenSubject()
        let totals = (0..<observers).map { _ in Total() }
        for total in totals { subject.observe(makeAdder(total)) }
        let count = opaque(count)
        return {
            let before = totals.map(\.value)
            for value in 0..<count {
                subject.send(value)
            }
            for (index, total) in totals.enumerated() {
                try check(total.value - before[index], sumBelow(count), "\(name) observer \(index) total")
            }
        }
    }
}

/// W1 baseline, bare: a plain closure array called in a loop, no lock (not thread safe).
func handWrittenBareWorkload(name: String, observers: Int, count: Int) -> Workload {
    Workload(name: name, events: count) {
        let totals = (0..<observers).map { _ in Total() }
        let closures = opaque(ContiguousArray(totals.map(makeAdder)))
        let count = opaque(count)
        return {
            let before = totals.map(\.value)
            for value in 0..<count {
                for closure in closures {
                    closure(value)
                }
            }
            for (index, total) in totals.enumerated() {
                try check(total.value - before[index], sumBelow(count), "\(name) observer \(index) total")
            }
        }
    }
}

// MARK: W1 peer: OpenCombine

/// W1 with OpenCombine 0.14.0: a `PassthroughSubject<Int, Never>` with `sink` subscribers.
func openCombineWorkload(name: String, observers: Int, count: Int) -> Workload {
    Workload(name: name, events: count) {
        let subject = PassthroughSubject<Int, Never>()
        let totals = (0..<observers).map { _ in Total() }
        let cancellables = totals.map { total in subject.sink { total.value &+= $0 } }
        let count = opaque(count)
        return {
            let before = totals.map(\.value)
            for value in 0..<count {
                subject.send(value)
            }
            for (index, total) in totals.enumerated() {
                try check(total.value - before[index], sumBelow(count), "\(name) observer \(index) total")
            }
            withExtendedLifetime(cancellables) {}
        }
    }
}
