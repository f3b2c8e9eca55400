extension Signal {
    /// A signal that forwards at most one value per `interval`, through `scheduler`, as ReactiveSwift's
    /// `throttle(_:on:)`: the first value goes through `scheduler` at once (a `TestScheduler`'s next
    /// `advance()`); a value that arrives less than `interval` after the last one sent waits until the
    /// interval has passed, and is replaced by any value that arrives meanwhile, so the **latest** one
    /// is sent.
    ///
    /// - A terminal event goes through `scheduler` at once; a value still waiting for its interval is
    ///   then dropped (a value already due, scheduled before the terminal event, is sent first).
    /// - Every event of the result is sent from the scheduler's actions, in the order they run.
    ///
    /// When the result ends (its terminal event is delivered, or nobody holds or observes it any more),
    /// it detaches from this signal and cancels everything it still has scheduled.
    ///
    /// - Precondition: `interval` is not negative.
    public func throttle(_ interval: Duration, on scheduler: some TimeScheduler) -> Signal<Value, Error> {
        precondition(interval >= .zero, "throttle(_:on:): the interval must not be negative, got \(interval)")
        return Signal.relaying { output in
            let storage = ThrottleStorage<Value, Error>(interval: interval, output: output)
            // The scheduler is kept by this observer only, never by what the scheduler holds (see
            // `debounce`): no reference cycle through a `TestScheduler` left with pending actions.
            let upstream = observe(Observer { event in storage.receive(event, on: scheduler) })
            // What ends with the result keeps the scheduled actions, not the storage: the storage keeps
            // the result's input (`output`), so keeping it here would keep the result alive by itself.
            let actions = storage.actions
            return AnyDisposable {
                upstream.dispose()
                actions.cancelAll()
            }
        }
    }
}

extension SignalProducer {
    /// A producer whose runs throttle the values of a run of this producer. See
    /// `Signal.throttle(_:on:)`.
    ///
    /// Disposing a run interrupts it at once and cancels everything it still has scheduled, so a
    /// `TestScheduler` has none of its actions pending afterwards.
    ///
    /// - Precondition: `interval` is not negative.
    public func throttle(_ interval: Duration, on scheduler: some TimeScheduler) -> SignalProducer<Value, Error> {
        precondition(interval >= .zero, "throttle(_:on:): the interval must not be negative, got \(interval)")
        return lift { $0.throttle(interval, on: scheduler) }
    }
}

/// The bookkeeping of one throttle: the value waiting and when the last one was sent. Pure:
/// `ThrottleStorage` keeps it in a `Locked` and performs what its methods return.
struct ThrottleStateMachine<Value: Sendable>: Sendable {
    /// What the storage must do after a value of the upstream.
    enum ValueAction {
        /// Nothing (the result has ended).
        case none
        /// Cancel the scheduled action `cancelling`, if any, then schedule a firing at `due`, record its
        /// id with `timerScheduled(_:generation:)`, and release `replaced` (the value that was waiting,
        /// if any) after the lock.
        case scheduleFiring(due: Duration, generation: UInt64, cancelling: UInt64?, replaced: Value?)
    }

    let interval: Duration
    private var pending: Value?
    /// The instant the last value was sent.
    private var lastSent: Duration?
    private var generation: UInt64 = 0
    private var timer: UInt64?
    private var isTerminated = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// A value arrived at `now`.
    mutating func value(_ value: Value, now: Duration) -> ValueAction {
        guard !isTerminated else { return .none }
        var replaced: Value? = value
        swap(&pending, &replaced)
        generation &+= 1
        let previousTimer = timer
        timer = nil
        // The clock never goes back, so the last value was sent at or before `now` (ReactiveSwift checks
        // it, for `Date`s); a `now` read a little late by a sending thread cannot shorten the interval.
        let due = lastSent.map { Swift.max($0 + interval, now) } ?? now
        return .scheduleFiring(due: due, generation: generation, cancelling: previousTimer, replaced: replaced)
    }

    /// Records the id of the action scheduled for `generation`, unless a later value superseded it.
    ///
    /// - Returns: false if it was superseded: the caller must cancel `id` itself.
    mutating func timerScheduled(_ id: UInt64, generation: UInt64) -> Bool {
        guard generation == self.generation, !isTerminated else { return false }
        timer = id
        return true
    }

    /// The firing scheduled for `generation` runs at `now`: the value to send, if any.
    mutating func fire(generation: UInt64, now: Duration) -> Value? {
        guard !isTerminated, generation == self.generation, let value = pending.take() else { return nil }
        timer = nil
        lastSent = now
        return value
    }

    /// The terminal event, scheduled at once, runs: later firings send nothing.
    ///
    /// - Returns: the value that was waiting, if any, dropped: the caller must release it after the lock.
    mutating func terminate() -> Value? {
        isTerminated = true
        return pending.take()
    }
}

/// One run of a throttle: decides under the lock, schedules and sends with no lock held. It does not
/// keep the scheduler (see `Signal.throttle`).
private final class ThrottleStorage<Value: Sendable, Error: Swift.Error>: Sendable {
    private let machine: Locked<ThrottleStateMachine<Value>>
    /// What it has scheduled and not run yet; cancelled when the result ends.
    let actions = ScheduledActions()
    private let output: Observer<Value, Error>

    init(interval: Duration, output: Observer<Value, Error>) {
        machine = Locked(ThrottleStateMachine(interval: interval))
        self.output = output
    }

    /// An event of the upstream, to schedule on `scheduler`; called serially.
    func receive(_ event: Event<Value, Error>, on scheduler: some TimeScheduler) {
        guard case let .value(value) = event else {
            actions.schedule({ scheduler.schedule($0) }) { [self] in
                let dropped = machine.withCriticalRegion { $0.terminate() }
                output.send(event)
                withExtendedLifetime(dropped) {}  // released with no lock held
            }
            return
        }
        let now = scheduler.now
        guard
            case let .scheduleFiring(due, generation, cancelling, replaced) = machine.withCriticalRegion({
                $0.value(value, now: now)
            })
        else {
            return
        }
        defer { withExtendedLifetime(replaced) {} }  // released with no lock held
        if let cancelling { actions.cancel(cancelling) }
        let clock = SchedulerClock(scheduler, otherwise: due)
        let id = actions.schedule({ scheduler.schedule(after: due - now, action: $0) }) { [self] in
            // The instant it actually runs: another thread may have moved the clock past `due` before
            // this action was scheduled, and the next value must wait a whole interval from the send.
            let firedAt = clock.now()  // read before taking the lock: `now` may be user code
            if let value = machine.withCriticalRegion({ $0.fire(generation: generation, now: firedAt) }) {
                output.send(value: value)
            }
        }
        if let id, !machine.withCriticalRegion({ $0.timerScheduled(id, generation: generation) }) {
            actions.cancel(id)
        }
    }
}
