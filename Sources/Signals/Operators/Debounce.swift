extension Signal {
    /// A signal that forwards a value only once `interval` has passed without this signal sending
    /// another one, through `scheduler`, as ReactiveSwift's `debounce(_:on:discardWhenCompleted:)`.
    ///
    /// - Each value replaces the one waiting, if any, and restarts the wait: its scheduled action is
    ///   cancelled and a new one is scheduled `interval` from now.
    /// - Completion: with `discardWhenCompleted` (the default), the value still waiting is dropped and
    ///   the completion goes through `scheduler` at once (a `TestScheduler`'s next `advance()`).
    ///   Otherwise the waiting value is sent when its wait ends, then the result completes.
    /// - A failure or an interruption drops the waiting value and goes through `scheduler` at once.
    /// - Every event of the result is sent from the scheduler's actions, in the order they run.
    ///
    /// When the result ends (its terminal event is delivered, or nobody holds or observes it any more),
    /// it detaches from this signal and cancels everything it still has scheduled.
    ///
    /// - Precondition: `interval` is not negative.
    public func debounce(
        _ interval: Duration,
        on scheduler: some TimeScheduler,
        discardWhenCompleted: Bool = true
    ) -> Signal<Value, Error> {
        precondition(interval >= .zero, "debounce(_:on:): the interval must not be negative, got \(interval)")
        return Signal.relaying { output in
            let storage = DebounceStorage(
                interval: interval, discardWhenCompleted: discardWhenCompleted, output: output)
            // The scheduler is kept by this observer only, never by what the scheduler holds (the
            // scheduled actions, the output, what ends with it), so a `TestScheduler` left with pending
            // actions at the end of a test is freed with them: no reference cycle through it.
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
    /// A producer whose runs debounce the values of a run of this producer. See
    /// `Signal.debounce(_:on:discardWhenCompleted:)`.
    ///
    /// Disposing a run interrupts it at once and cancels everything it still has scheduled, so a
    /// `TestScheduler` has none of its actions pending afterwards.
    ///
    /// - Precondition: `interval` is not negative.
    public func debounce(
        _ interval: Duration,
        on scheduler: some TimeScheduler,
        discardWhenCompleted: Bool = true
    ) -> SignalProducer<Value, Error> {
        precondition(interval >= .zero, "debounce(_:on:): the interval must not be negative, got \(interval)")
        return lift { $0.debounce(interval, on: scheduler, discardWhenCompleted: discardWhenCompleted) }
    }
}

/// The bookkeeping of one debounce: the value waiting, its generation, and when it arrived. Pure:
/// `DebounceStorage` keeps it in a `Locked` and performs what its methods return.
struct DebounceStateMachine<Value: Sendable, Error: Swift.Error>: Sendable {
    /// What the storage must do after an event of the upstream.
    enum Action {
        /// Nothing (the result has already ended).
        case none
        /// Cancel the scheduled action `cancelling`, if any, then schedule the firing of `generation` at
        /// `due`, record its id with `timerScheduled(_:generation:)`, and release `replaced` (the value
        /// that was waiting, if any) after the lock.
        case scheduleFiring(due: Duration, generation: UInt64, cancelling: UInt64?, replaced: Value?)
        /// Cancel `cancelling`, if any, then send `event` through the scheduler at once, and release
        /// `dropped` (the value that was waiting, if any) after the lock.
        case terminate(Event<Value, Error>, cancelling: UInt64?, dropped: Value?)
        /// Cancel `cancelling`, if any, then send `value` and complete at `due`.
        case sendThenComplete(Value, due: Duration, cancelling: UInt64?)
    }

    let interval: Duration
    let discardWhenCompleted: Bool
    private var pending: Value?
    private var lastUpdated: Duration = .zero
    /// Increases with each value, so that a firing scheduled for an older value sends nothing.
    private var generation: UInt64 = 0
    /// The scheduled action that will fire for the current generation.
    private var timer: UInt64?
    private var isTerminated = false

    init(interval: Duration, discardWhenCompleted: Bool) {
        self.interval = interval
        self.discardWhenCompleted = discardWhenCompleted
    }

    mutating func receive(_ event: Event<Value, Error>, now: Duration) -> Action {
        guard !isTerminated else { return .none }
        let previousTimer = timer
        timer = nil
        generation &+= 1
        switch event {
        case let .value(value):
            var replaced: Value? = value
            swap(&pending, &replaced)
            lastUpdated = now
            return .scheduleFiring(
                due: now + interval, generation: generation, cancelling: previousTimer, replaced: replaced)
        case .completed:
            isTerminated = true
            if !discardWhenCompleted, let value = pending.take() {
                return .sendThenComplete(value, due: lastUpdated + interval, cancelling: previousTimer)
            }
            return .terminate(.completed, cancelling: previousTimer, dropped: pending.take())
        case .failed, .interrupted:
            isTerminated = true
            return .terminate(event, cancelling: previousTimer, dropped: pending.take())
        }
    }

    /// Records the id of the action scheduled for `generation`, unless a later event superseded it.
    ///
    /// - Returns: false if it was superseded: the caller must cancel `id` itself.
    mutating func timerScheduled(_ id: UInt64, generation: UInt64) -> Bool {
        guard generation == self.generation, !isTerminated else { return false }
        timer = id
        return true
    }

    /// The firing scheduled for `generation` runs: the value to send, if it is still the current one.
    mutating func fire(generation: UInt64) -> Value? {
        guard generation == self.generation, !isTerminated else { return nil }
        timer = nil
        return pending.take()
    }
}

/// One run of a debounce: decides under the lock, schedules and sends with no lock held. It does not
/// keep the scheduler (see `Signal.debounce`).
private final class DebounceStorage<Value: Sendable, Error: Swift.Error>: Sendable {
    private let machine: Locked<DebounceStateMachine<Value, Error>>
    /// What it has scheduled and not run yet; cancelled when the result ends.
    let actions = ScheduledActions()
    private let output: Observer<Value, Error>

    init(interval: Duration, discardWhenCompleted: Bool, output: Observer<Value, Error>) {
        machine = Locked(DebounceStateMachine(interval: interval, discardWhenCompleted: discardWhenCompleted))
        self.output = output
    }

    /// An event of the upstream, to schedule on `scheduler`; called serially.
    func receive(_ event: Event<Value, Error>, on scheduler: some TimeScheduler) {
        let now = scheduler.now
        switch machine.withCriticalRegion({ $0.receive(event, now: now) }) {
        case .none:
            break
        case let .scheduleFiring(due, generation, cancelling, replaced):
            if let cancelling { actions.cancel(cancelling) }
            let id = actions.schedule({ scheduler.schedule(after: due - now, action: $0) }) { [self] in
                if let value = machine.withCriticalRegion({ $0.fire(generation: generation) }) {
                    output.send(value: value)
                }
            }
            if let id, !machine.withCriticalRegion({ $0.timerScheduled(id, generation: generation) }) {
                actions.cancel(id)
            }
            withExtendedLifetime(replaced) {}  // released with no lock held
        case let .terminate(event, cancelling, dropped):
            if let cancelling { actions.cancel(cancelling) }
            actions.schedule({ scheduler.schedule($0) }) { [output] in output.send(event) }
            withExtendedLifetime(dropped) {}  // released with no lock held
        case let .sendThenComplete(value, due, cancelling):
            if let cancelling { actions.cancel(cancelling) }
            actions.schedule({ scheduler.schedule(after: due - now, action: $0) }) { [output] in
                output.send(value: value)
                output.sendCompleted()
            }
        }
    }
}
