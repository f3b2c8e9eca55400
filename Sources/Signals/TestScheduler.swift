/// A scheduler with a virtual clock, for tests: nothing runs until the test moves the clock.
///
/// - The clock starts at `.zero` and only moves when `advance()`, `advance(by:)`, `advance(to:)` or
///   `run()` is called. It never goes back.
/// - `schedule(_:)` enqueues an action at the current instant: it runs on the next advance, not
///   during the `schedule` call. `schedule(after:)` enqueues it at `now + delay`.
/// - Actions run in time order; actions due at the same instant run in the order they were scheduled.
///   While an action runs, `now` is the instant it was due.
/// - Actions run on the thread that advances the clock, **with no lock held**. An action, or another
///   thread, may therefore schedule, cancel, or read `now` while the clock advances: an action
///   scheduled during an advance for an instant up to the advance's target runs within that same
///   advance, in time order. Nothing here blocks or deadlocks.
/// - A disposed action never runs; disposing removes it from the queue at once.
///
/// All methods are thread safe. Drive the clock from one thread at a time (actions may call
/// `advance` themselves): two threads advancing at once would run actions concurrently.
///
/// Pending actions are kept until they run or are cancelled, with whatever they capture. The package's
/// operators never make the scheduler reachable from their own pending actions, so a test that ends
/// with actions pending frees everything when it drops the scheduler. An observer of yours that
/// captures the scheduler while an event for it is pending makes a reference cycle, though: end such
/// a test with `run()`.
public final class TestScheduler: TimeScheduler {
    private struct Entry {
        /// Stable for the life of the action, across the occurrences of a repeating one.
        let id: UInt64
        let due: Duration
        /// Orders actions due at the same instant: lower runs first.
        let sequence: UInt64
        let interval: Duration?
        let action: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var nextSequence: UInt64 = 0
        /// Sorted by (due, sequence), **descending**, so the next action to run is the last one.
        var entries: [Entry] = []

        /// Enqueues an action (a new one, or the next occurrence of a repeating one when `id` is given).
        mutating func enqueue(
            id: UInt64?,
            due: Duration,
            interval: Duration?,
            action: @escaping @Sendable () -> Void
        ) -> UInt64 {
            let sequence = nextSequence
            nextSequence += 1
            let entry = Entry(id: id ?? sequence, due: due, sequence: sequence, interval: interval, action: action)
            // The new entry has the highest sequence, so it goes before (in this descending order)
            // every entry due at the same instant or earlier: find the first such entry.
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].due <= due {
                    high = middle
                } else {
                    low = middle + 1
                }
            }
            entries.insert(entry, at: low)
            return entry.id
        }

        /// Removes the action `id`, and returns it, to be released once the lock is: releasing it may
        /// release an input observer, which sends an event.
        mutating func cancel(_ id: UInt64) -> Entry? {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            return entries.remove(at: index)
        }

        /// Takes the next action due at or before `limit` (any next action if `limit` is nil), moving
        /// the clock to its instant and enqueueing the next occurrence of a repeating action. When
        /// nothing is due, moves the clock to `limit` and returns nil.
        mutating func takeNextAction(dueBy limit: Duration?) -> (@Sendable () -> Void)? {
            guard let next = entries.last, limit.map({ next.due <= $0 }) ?? true else {
                if let limit, limit > now { now = limit }
                return nil
            }
            entries.removeLast()
            if next.due > now { now = next.due }
            if let interval = next.interval {
                // Enqueued before the action runs, so that disposing from inside the action cancels it.
                _ = enqueue(id: next.id, due: next.due + interval, interval: interval, action: next.action)
            }
            return next.action
        }
    }

    private let state = Locked(State())
    /// The tasks sleeping on `clock`.
    let sleepers = TestClockSleepers()

    /// A test scheduler whose clock reads `.zero`, with nothing scheduled.
    public init() {}

    /// The virtual time: `.zero` at creation, then where the last advance left it (during an action,
    /// the instant that action was due).
    public var now: Duration {
        state.withCriticalRegion { $0.now }
    }

    /// How many actions are waiting to run, repeating actions counting once. Useful to prove that a
    /// disposal cancelled what it should have.
    public var pendingActionCount: Int {
        state.withCriticalRegion { $0.entries.count }
    }

    /// Enqueues `action` at the current instant; it runs on the next advance, after the actions
    /// already due at this instant.
    ///
    /// - Returns: a disposable that removes `action` from the queue if it has not started yet.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        enqueue(after: .zero, interval: nil, action: action)
    }

    /// Enqueues `action` at `now + delay` (at the current instant if `delay` is not positive).
    ///
    /// - Returns: a disposable that removes `action` from the queue if it has not started yet.
    @discardableResult
    public func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> Disposable? {
        enqueue(after: delay, interval: nil, action: action)
    }

    /// Enqueues `action` at `now + delay`, then every `interval` after each occurrence's instant, until
    /// the returned disposable is disposed (disposing it from inside the action stops it). `leeway` is
    /// ignored: virtual time is exact.
    ///
    /// A repeating action is never "done", so `run()` would not return while one is scheduled: dispose
    /// it first, or move the clock with `advance(by:)` / `advance(to:)`.
    ///
    /// - Precondition: `interval` is positive.
    @discardableResult
    public func schedule(
        after delay: Duration,
        interval: Duration,
        leeway: Duration,
        action: @escaping @Sendable () -> Void
    ) -> Disposable? {
        precondition(interval > .zero, "TestScheduler: a repeating action needs a positive interval, got \(interval)")
        return enqueue(after: delay, interval: interval, action: action)
    }

    private func enqueue(
        after delay: Duration,
        interval: Duration?,
        action: @escaping @Sendable () -> Void
    ) -> Disposable {
        enqueue(interval: interval, action: action) { now in now + Swift.max(delay, .zero) }
    }

    /// Enqueues `action` at the instant `instant`, or at the current instant if it has passed, reading
    /// the clock and enqueueing in one step: for `TestClock`, whose sleeps end at a deadline however
    /// the clock moves meanwhile.
    func schedule(at instant: Duration, action: @escaping @Sendable () -> Void) -> Disposable {
        enqueue(interval: nil, action: action) { now in Swift.max(instant, now) }
    }

    /// Enqueues `action` at the instant `due` computes from the current one, under the lock.
    private func enqueue(
        interval: Duration?,
        action: @escaping @Sendable () -> Void,
        due: (_ now: Duration) -> Duration
    ) -> Disposable {
        let id = state.withCriticalRegion { state in
            state.enqueue(id: nil, due: due(state.now), interval: interval, action: action)
        }
        return AnyDisposable { [weak self] in
            let cancelled = self?.state.withCriticalRegion { $0.cancel(id) }
            withExtendedLifetime(cancelled) {}
        }
    }

    // MARK: Moving the clock

    /// Runs every action due at the current instant, including those they schedule for it, without
    /// moving the clock.
    public func advance() {
        advance { now in now }
    }

    /// Moves the clock forward by `duration`, running, in time order, every action due up to the new
    /// instant, including those scheduled (by the actions or by other threads) while it advances.
    ///
    /// - Precondition: `duration` is not negative.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "TestScheduler: cannot advance by a negative duration (\(duration))")
        advance { now in now + duration }
    }

    /// Moves the clock forward to `instant`, running, in time order, every action due up to it,
    /// including those scheduled (by the actions or by other threads) while it advances.
    ///
    /// - Precondition: `instant` is not earlier than `now`: the clock never goes back.
    public func advance(to instant: Duration) {
        advance { now in
            precondition(instant >= now, "TestScheduler: cannot move the clock back from \(now) to \(instant)")
            return instant
        }
    }

    /// Runs actions in time order, moving the clock to each one's instant, until none is left, those
    /// the actions schedule included. The clock is left at the last action's instant.
    ///
    /// - Warning: a repeating action that is not disposed reschedules itself forever, so `run()` never
    ///   returns while one is scheduled. Dispose it first (or from inside an action), or use
    ///   `advance(by:)` / `advance(to:)`, which stop at a given instant.
    public func run() {
        while let action = state.withCriticalRegion({ $0.takeNextAction(dueBy: nil) }) {
            action()
        }
    }

    /// Runs the actions due up to the target that `target` computes from the current time. The target
    /// is computed under the lock so that reading the clock and deciding the target are one step.
    private func advance(_ target: (_ now: Duration) -> Duration) {
        let limit = state.withCriticalRegion { target($0.now) }
        // One action at a time, each taken under the lock and run without it, so that actions scheduled
        // meanwhile are seen by the next `takeNextAction`.
        while let action = state.withCriticalRegion({ $0.takeNextAction(dueBy: limit) }) {
            action()
        }
    }
}
