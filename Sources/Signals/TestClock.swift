extension TestScheduler {
    /// This scheduler's virtual time as a Swift `Clock`, so that async code written with
    /// `try await clock.sleep(for:)` runs on virtual time in tests. See `TestClock`.
    public var clock: TestClock {
        TestClock(scheduler: self)
    }
}

/// A `TestScheduler`'s virtual time as a `Clock`: `now` is the scheduler's `now`, and `sleep(until:)`
/// schedules the wake-up on the scheduler, so the sleeping task resumes when the test advances the
/// clock past its deadline.
///
/// - A sleep whose deadline has passed returns at once (after checking for cancellation).
/// - Cancelling the sleeping task removes its wake-up from the scheduler and makes `sleep` throw
///   `CancellationError` at once; so disposing an effect written with `clock.sleep`, which cancels its
///   task, leaves nothing pending (`pendingActionCount` drops).
///
/// **Waiting for async work deterministically.** Advancing the scheduler resumes a sleeping task, but
/// the task runs later, on Swift's concurrency pool. A test therefore:
/// 1. waits until the code under test is asleep: `await clock.waitForSleepers(1)`;
/// 2. advances with `await clock.advance(by:)`, which returns once every task it woke has returned
///    from `sleep` (not necessarily done what follows);
/// 3. awaits the **result** itself through a sequence made before the advance, e.g.
///    `let replies = automaton.replies.stream()` then `await iterator.next()`.
/// No step sleeps for real time.
public struct TestClock: Clock {
    /// An instant of virtual time: the duration since the scheduler's origin.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The time since the scheduler's origin (`.zero` when it was created).
        public let offset: Duration

        /// The instant `offset` after the origin.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset, e.g. `2.0 seconds`.
        public var description: String { "\(offset)" }
    }

    /// The duration type, `Swift.Duration`.
    public typealias Duration = Swift.Duration

    /// The scheduler whose time this is.
    public let scheduler: TestScheduler

    /// The clock of `scheduler`; the same as `scheduler.clock`.
    public init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    /// The scheduler's current virtual time.
    public var now: Instant { Instant(offset: scheduler.now) }

    /// Virtual time is exact.
    public var minimumResolution: Duration { .zero }

    /// Suspends until the scheduler's clock reaches `deadline` (moved by the test), or throws
    /// `CancellationError` as soon as the calling task is cancelled. `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        guard deadline.offset > scheduler.now else { return }
        let sleep = TestClockSleep()
        let sleepers = scheduler.sleepers
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Swift.Error>) in
                guard sleep.install(continuation) else { return }
                // The wake-up is scheduled at the deadline itself, not at a delay from a clock that
                // another thread may move meanwhile. The sleeper is counted once its wake-up exists,
                // so that a test that saw it asleep (`waitForSleepers`) and advances the clock wakes
                // it. If the clock wakes it first, the counts pass through -1 and end right.
                let wakeUp = scheduler.schedule(at: deadline.offset) {
                    sleep.finish(.success(()), ifAsleep: sleepers.woke)
                }
                sleep.setWakeUp(wakeUp)
                sleepers.fellAsleep()
            }
        } onCancel: {
            sleep.finish(.failure(CancellationError()), ifAsleep: sleepers.cancelled)
        }
        sleepers.returned()
    }

    /// How many tasks are asleep on this clock, waiting for the scheduler to reach their deadline: a
    /// task counts once its wake-up is scheduled, so advancing past its deadline wakes it.
    public var sleeperCount: Int { Swift.max(scheduler.sleepers.count.asleep, 0) }

    /// Returns once at least `count` tasks are asleep on this clock (at once if they already are),
    /// so that the test can advance the clock knowing the code under test is waiting for it.
    public func waitForSleepers(_ count: Int) async {
        await scheduler.sleepers.wait { $0.asleep >= count }
    }

    /// Advances the scheduler by `duration` (see `TestScheduler.advance(by:)`), then returns once every
    /// task woken by it has returned from `sleep`. What such a task does next runs concurrently: await
    /// its result (for example through a `stream()` made before the advance).
    public func advance(by duration: Duration) async {
        scheduler.advance(by: duration)
        await scheduler.sleepers.wait { $0.wokenNotReturned == 0 }
    }
}

/// One `sleep`: its continuation and wake-up, finished exactly once, by the wake-up or by cancellation.
private final class TestClockSleep: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Swift.Error>?
        var wakeUp: Disposable?
        /// Set when finished before the continuation was installed (cancelled early).
        var outcome: Result<Void, any Swift.Error>?
        var isFinished = false
    }

    private let state = Locked(State())

    /// Installs the continuation; false if the sleep was cancelled first (it is then resumed here).
    func install(_ continuation: CheckedContinuation<Void, any Swift.Error>) -> Bool {
        let outcome = state.withCriticalRegion { state -> Result<Void, any Swift.Error>? in
            if state.isFinished { return state.outcome }
            state.continuation = continuation
            return nil
        }
        guard let outcome else { return true }
        continuation.resume(with: outcome)
        return false
    }

    func setWakeUp(_ wakeUp: Disposable?) {
        let cancelled = state.withCriticalRegion { state -> Bool in
            if state.isFinished { return true }
            state.wakeUp = wakeUp
            return false
        }
        if cancelled { wakeUp?.dispose() }
    }

    /// Finishes the sleep with `outcome` unless it already finished. If it was asleep (counted among
    /// the sleepers), runs `ifAsleep` first, with no lock held, before resuming the sleeping task.
    func finish(_ outcome: Result<Void, any Swift.Error>, ifAsleep: () -> Void) {
        let taken = state.withCriticalRegion { state -> (CheckedContinuation<Void, any Swift.Error>?, Disposable?)? in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.wakeUp = nil
            }
            return (state.continuation, state.wakeUp)
        }
        guard let (continuation, wakeUp) = taken else { return }
        wakeUp?.dispose()
        if let continuation {
            ifAsleep()
            continuation.resume(with: outcome)
        }
    }
}

/// The bookkeeping of the tasks sleeping on one scheduler's clock, and of the tests waiting on it.
final class TestClockSleepers: Sendable {
    struct Counts: Sendable {
        /// Tasks whose wake-up is scheduled.
        var asleep = 0
        /// Tasks woken by the scheduler that have not returned from `sleep` yet.
        var wokenNotReturned = 0
    }

    private struct State {
        var counts = Counts()
        var waiters: [(condition: @Sendable (Counts) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var count: Counts { state.withCriticalRegion { $0.counts } }

    func fellAsleep() { update { $0.asleep += 1 } }
    func woke() {
        update {
            $0.asleep -= 1; $0.wokenNotReturned += 1
        }
    }
    /// A sleep cancelled: it never counts as woken.
    func cancelled() { update { $0.asleep -= 1 } }
    /// A woken sleep has returned (a cancelled one throws and never calls this).
    func returned() { update { $0.wokenNotReturned -= 1 } }

    /// Returns once `condition` holds for the counts.
    func wait(until condition: @escaping @Sendable (Counts) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withCriticalRegion { state -> Bool in
                if condition(state.counts) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func update(_ change: (inout Counts) -> Void) {
        let ready = state.withCriticalRegion { state -> [CheckedContinuation<Void, Never>] in
            change(&state.counts)
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(state.counts) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
