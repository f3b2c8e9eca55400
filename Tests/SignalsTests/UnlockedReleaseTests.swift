import Dispatch
import Signals
import Testing

/// A value an operator keeps is the user's, so releasing it may run user code (a `deinit`). No operator
/// releases one under its lock.
///
/// Where the operator's lock can be taken again from the `deinit` (another source, the outer stream of
/// a flattening, the scheduler, the upstream of an iterator), the `deinit` does so, on the releasing
/// thread: released under the lock, it would wait for that lock forever, so the step runs on a thread
/// of its own and a hang fails the test. An operator that only ever takes its lock while its one
/// upstream delivers cannot be re-entered (a send from the `deinit` is queued), so its test checks
/// that the value is released after the event the operator sends, which it sends with no lock held.
@Suite("User values the operators drop are released after their locks")
struct UnlockedReleaseTests {
    // MARK: Operators whose lock the release can take again

    @Test("flatten(.concat): a started inner producer is released after the lock")
    func flattenStartedInner() {
        let (outer, outerInput) = Signal<SignalProducer<Int, Never>, Never>.pipe()
        let log = TestLog<String>()
        let inners = Inners<Never>()
        outer.flatten(.concat).observe { log.append(describe($0)) }

        outerInput.send(value: inners.make(1, log: log))
        // Its release sends to the outer stream, whose observer takes the flattening's lock.
        outerInput.send(value: inners.make(2, log: log) { outerInput.send(value: SignalProducer(value: 20)) })
        outerInput.send(value: inners.make(3, log: log))
        guard
            finishes("inner 1 to complete", { inners.complete(1) }),
            finishes("inner 2 to complete", { inners.complete(2) })
        else { return }
        inners.complete(3)
        outerInput.sendCompleted()

        #expect(
            log.entries == [
                "sent 1", "released 1", "sent 2", "released 2", "sent 3", "released 3", "sent 20", "completed",
            ])
    }

    @Test("flatten(.concat): inner producers a failure drops from the queue are released after the lock")
    func flattenTerminationDropsQueue() {
        let (outer, outerInput) = Signal<SignalProducer<Int, TestError>, TestError>.pipe()
        let log = TestLog<String>()
        let inners = Inners<TestError>()
        outer.flatten(.concat).observe { log.append(describe($0)) }

        outerInput.send(value: inners.make(1, log: log))
        outerInput.send(value: inners.make(2, log: log) { outerInput.send(value: SignalProducer(value: 20)) })
        outerInput.send(value: inners.make(3, log: log))
        guard finishes("inner 1 to fail", { inners.fail(1) }) else { return }

        #expect(log.entries == ["sent 1", "released 1", "failed", "released 2", "released 3"])
    }

    @Test("values: a value next() took is released after the lock")
    func valuesTaken() async {
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        let done = DispatchSemaphore(value: 0)
        // Detached, so that a hang blocks one of the pool's threads, not the test's own.
        Task.detached {
            var iterator = signal.values.makeAsyncIterator()
            // Its release sends to the signal, whose delivery takes the buffer's lock.
            input.send(value: Parcel(1, log: log) { input.send(value: Parcel(3, log: log)) })
            input.send(value: Parcel(2, log: log))
            for _ in 1...3 {
                let parcel = await iterator.next()
                log.append("took \(parcel?.id ?? 0)")
                withExtendedLifetime(parcel) {}  // released here, by the consumer
            }
            input.sendCompleted()
            let end = await iterator.next()
            log.append("took \(end?.id ?? 0)")
            done.signal()
        }
        guard await Watchdog.signalled(done, within: hangSeconds) else {
            Issue.record("the iteration hung")
            return
        }
        #expect(
            log.entries == [
                "took 1", "released 1", "took 2", "released 2", "took 3", "released 3", "took 0",
            ])
    }

    @Test("values: the values a cancellation drops are released after the lock")
    func valuesCancelled() async {
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            var iterator = signal.values.makeAsyncIterator()
            input.send(value: Parcel(1, log: log) { input.send(value: Parcel(2, log: log)) })
            withUnsafeCurrentTask { $0?.cancel() }
            let end = await iterator.next()
            log.append("took \(end?.id ?? 0)")
            done.signal()
        }
        guard await Watchdog.signalled(done, within: hangSeconds) else {
            Issue.record("the cancelled iteration hung")
            return
        }
        #expect(log.entries == ["released 1", "released 2", "took 0"])
    }

    @Test("combineLatest: a source's latest value, replaced, is released after the lock")
    func combineLatestReplaced() {
        let (a, aInput) = Signal<Parcel, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let log = TestLog<String>()
        Signal.combineLatest(a, b).observeValues { parcel, number in log.append("sent \(parcel.id)-\(number)") }

        // Its release sends to the other source, whose observer takes the combination's lock.
        aInput.send(value: Parcel(1, log: log) { bInput.send(value: 20) })
        bInput.send(value: 10)
        guard finishes("a's second value", { aInput.send(value: Parcel(2, log: log)) }) else { return }

        #expect(log.entries == ["sent 1-10", "sent 2-10", "released 1", "sent 2-20"])
    }

    @Test("sample: the latest value, replaced, is released after the lock")
    func sampleReplaced() {
        let (source, sourceInput) = Signal<Parcel, Never>.pipe()
        let (sampler, samplerInput) = Signal<Int, Never>.pipe()
        let log = TestLog<String>()
        source.sample(with: sampler).observeValues { parcel, number in log.append("sent \(parcel.id)-\(number)") }

        // Its release sends to the sampler, whose observer takes the sampling's lock.
        sourceInput.send(value: Parcel(1, log: log) { samplerInput.send(value: 20) })
        samplerInput.send(value: 10)
        guard finishes("the second value", { sourceInput.send(value: Parcel(2, log: log)) }) else { return }

        #expect(log.entries == ["sent 1-10", "released 1", "sent 2-20"])
    }

    @Test("throttle: the waiting value a newer one replaces is released after the lock")
    func throttleReplaced() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.throttle(.seconds(1), on: scheduler).observe { log.append(describe($0)) }

        input.send(value: Parcel(1, log: log))
        scheduler.advance()
        // Its release runs the firing scheduled for it, which takes the throttle's lock.
        input.send(value: Parcel(2, log: log, advancing: scheduler))
        guard finishes("the third value", { input.send(value: Parcel(3, log: log)) }) else { return }

        #expect(log.entries == ["sent 1", "released 1", "released 2", "sent 3", "released 3"])
        #expect(scheduler.now == .seconds(1))
    }

    @Test("throttle: the waiting value a termination drops is released after the lock")
    func throttleTerminated() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.throttle(.seconds(1), on: scheduler).observe { log.append(describe($0)) }

        input.send(value: Parcel(1, log: log))
        scheduler.advance()
        input.send(value: Parcel(2, log: log, advancing: scheduler))
        input.sendCompleted()
        guard finishes("the completion", { scheduler.advance() }) else { return }

        #expect(log.entries == ["sent 1", "released 1", "completed", "released 2"])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("debounce: the waiting value a newer one replaces is released after the lock")
    func debounceReplaced() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.debounce(.seconds(1), on: scheduler).observe { log.append(describe($0)) }

        // Its release runs the firing scheduled for it, which takes the debounce's lock.
        input.send(value: Parcel(1, log: log, advancing: scheduler))
        guard finishes("the second value", { input.send(value: Parcel(2, log: log)) }) else { return }

        #expect(log.entries == ["released 1", "sent 2", "released 2"])
        #expect(scheduler.now == .seconds(1))
    }

    @Test("debounce: the waiting value a completion discards is released after the lock")
    func debounceTerminated() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.debounce(.seconds(1), on: scheduler).observe { log.append(describe($0)) }

        input.send(value: Parcel(1, log: log, advancing: scheduler))
        guard finishes("the completion", { input.sendCompleted() }) else { return }

        #expect(log.entries == ["released 1", "completed"])
        #expect(scheduler.pendingActionCount == 0)
    }

    // MARK: Operators taking their lock only while their upstream delivers

    @Test("skipRepeats: the last value forwarded, replaced, is released after the lock")
    func skipRepeatsReplaced() {
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.skipRepeats().observe { log.append(describe($0)) }

        input.send(value: Parcel(1, log: log))
        input.send(value: Parcel(1, log: log))
        input.send(value: Parcel(2, log: log))

        #expect(log.entries == ["sent 1", "released 1", "sent 2", "released 1"])
    }

    @Test("scan: the accumulated value, replaced, is released after the lock")
    func scanReplaced() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<String>()
        signal.scan(Parcel(0, log: log)) { sum, number in Parcel(sum.id + number, log: log) }
            .observe { log.append(describe($0)) }

        input.send(value: 1)
        input.send(value: 2)

        #expect(log.entries == ["sent 1", "released 0", "sent 3", "released 1"])
    }

    @Test("uniqueValues: the identities a termination drops are released after the lock")
    func uniqueValuesTerminated() {
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.uniqueValues().observe { log.append(describe($0)) }

        input.send(value: Parcel(1, log: log))
        input.send(value: Parcel(1, log: log))
        input.sendInterrupted()

        #expect(log.entries == ["sent 1", "released 1", "interrupted", "released 1"])
    }

    @Test("reduce: the accumulator a failure drops is released after the lock")
    func reduceFailed() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        signal.reduce(Parcel(0, log: log)) { sum, number in Parcel(sum.id + number, log: log) }
            .observe { log.append(describe($0)) }

        input.send(value: 1)
        input.send(error: .boom)

        #expect(log.entries == ["released 0", "failed", "released 1"])
    }

    @Test("collect: the values an interruption drops are released after the lock")
    func collectInterrupted() {
        let (signal, input) = Signal<Parcel, Never>.pipe()
        let log = TestLog<String>()
        signal.collect().observe { log.append(describe($0.map { $0.map(\.id) })) }

        input.send(value: Parcel(1, log: log))
        input.send(value: Parcel(2, log: log))
        input.sendInterrupted()

        #expect(log.entries == ["interrupted", "released 1", "released 2"])
    }

    @Test("take(last:): the values a failure drops are released after the lock")
    func takeLastFailed() {
        let (signal, input) = Signal<Parcel, TestError>.pipe()
        let log = TestLog<String>()
        signal.take(last: 2).observe { log.append(describe($0)) }

        for id in 1...3 {
            input.send(value: Parcel(id, log: log))
        }
        input.send(error: .boom)

        #expect(log.entries == ["released 1", "failed", "released 2", "released 3"])
    }
}

// MARK: Helpers

/// How long a step may take before it counts as hung (waiting for a lock its own thread holds). Far
/// above any step's time: the whole suite in parallel on 2 cores (its thread tests spawn 4 threads
/// each) once kept a detached task of the `values` tests from running for over 30 s.
private let hangSeconds = 120.0

/// Runs `body` on a thread of its own and waits for it; records an issue and returns false if it hangs.
private func finishes(
    _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Watchdog.startThread {
        body()
        done.signal()
    }
    return Watchdog.wait(done, timeout: .seconds(Int(hangSeconds)), what, sourceLocation: sourceLocation)
}

/// A user's value that logs "released <id>" when it is released, then runs `onRelease` (user code).
private final class Parcel: Hashable, Sendable {
    let id: Int
    private let log: TestLog<String>?
    private let onRelease: @Sendable () -> Void

    init(_ id: Int, log: TestLog<String>? = nil, onRelease: @escaping @Sendable () -> Void = {}) {
        self.id = id
        self.log = log
        self.onRelease = onRelease
    }

    /// A parcel whose release advances `scheduler` by a second (it does not keep the scheduler).
    convenience init(_ id: Int, log: TestLog<String>, advancing scheduler: TestScheduler) {
        let weakScheduler = WeakBox(scheduler)
        self.init(id, log: log) { weakScheduler.object?.advance(by: .seconds(1)) }
    }

    deinit {
        log?.append("released \(id)")
        onRelease()
    }

    static func == (lhs: Parcel, rhs: Parcel) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

/// "sent <value>" for a value (a parcel shown by its id), the terminal event's name otherwise.
private func describe<Value, Error>(_ event: Event<Value, Error>) -> String {
    switch event {
    case let .value(parcel as Parcel): return "sent \(parcel.id)"
    case let .value(value): return "sent \(value)"
    case .completed: return "completed"
    case .failed: return "failed"
    case .interrupted: return "interrupted"
    }
}

/// Inner producers that send their id, keep a parcel in their start handler, and end when told.
private final class Inners<Error: Swift.Error>: Sendable {
    private let inputs = LockedTestValue<[Int: Observer<Int, Error>]>([:])

    /// Inner `id`, whose parcel logs its release, then runs `onRelease`.
    func make(_ id: Int, log: TestLog<String>, onRelease: @escaping @Sendable () -> Void = {})
        -> SignalProducer<Int, Error>
    {
        let parcel = Parcel(id, log: log, onRelease: onRelease)
        return SignalProducer { [inputs] observer, _ in
            withExtendedLifetime(parcel) {}
            inputs.withValue { $0[id] = observer }
            observer.send(value: id)
        }
    }

    func complete(_ id: Int) {
        inputs.withValue { $0.removeValue(forKey: id) }?.sendCompleted()
    }

    func fail(_ id: Int) where Error == TestError {
        inputs.withValue { $0.removeValue(forKey: id) }?.send(error: .boom)
    }
}
